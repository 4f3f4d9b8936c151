#include "tests/cluster/redis_cluster_fixture.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

namespace pto::testing {
namespace {

using pto::server::redis::Connection;
using pto::server::redis::ConnectionOptions;
using pto::server::redis::Reply;

// The path of `program` on $PATH (or the usual Debian directories); "" when
// absent.
std::string FindProgram(const std::string& program) {
  const char* path = getenv("PATH");
  std::string dirs = absl::StrCat(path != nullptr ? path : "", ":/usr/bin:/bin");
  for (absl::string_view dir : absl::StrSplit(dirs, ':', absl::SkipEmpty())) {
    const std::string candidate = absl::StrCat(dir, "/", program);
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// A socket bound to 127.0.0.1:`port` (0: any); -1 if it cannot be bound.
int BindLoopback(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

int PortOf(int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof(addr);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return 0;
  }
  return ntohs(addr.sin_port);
}

// `count` distinct free ports whose cluster bus ports (+10000) are free too.
absl::StatusOr<std::vector<int>> FreePorts(int count) {
  std::vector<int> held;  // sockets kept bound until all are chosen
  std::vector<int> ports;
  for (int tries = 0; tries < 200 && static_cast<int>(ports.size()) < count;
       ++tries) {
    const int fd = BindLoopback(0);
    if (fd < 0) continue;
    const int port = PortOf(fd);
    if (port <= 0 || port + 10000 > 65535) {
      close(fd);
      continue;
    }
    const int bus = BindLoopback(port + 10000);
    if (bus < 0) {
      close(fd);
      continue;
    }
    held.push_back(fd);
    held.push_back(bus);
    ports.push_back(port);
  }
  for (int fd : held) close(fd);
  if (static_cast<int>(ports.size()) < count) {
    return absl::UnavailableError("no free loopback ports for Redis");
  }
  return ports;
}

// Forks and execs `argv` with stdout and stderr to `log` and `env` added;
// the child is killed when this process dies.
absl::StatusOr<pid_t> Spawn(const std::vector<std::string>& argv,
                            const std::string& log,
                            const std::vector<std::string>& env = {}) {
  std::vector<char*> args;
  std::vector<std::string> owned = argv;
  for (std::string& a : owned) args.push_back(a.data());
  args.push_back(nullptr);
  std::vector<std::string> owned_env = env;
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
    }
    for (std::string& e : owned_env) putenv(e.data());
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `argv` to completion within `timeout`; its output when it exits 0.
absl::StatusOr<std::string> RunToCompletion(
    const std::vector<std::string>& argv, const std::string& log,
    const std::vector<std::string>& env, absl::Duration timeout) {
  unlink(log.c_str());
  absl::StatusOr<pid_t> pid = Spawn(argv, log, env);
  if (!pid.ok()) return pid.status();
  const absl::Time deadline = absl::Now() + timeout;
  int status = 0;
  while (waitpid(*pid, &status, WNOHANG) == 0) {
    if (absl::Now() > deadline) {
      kill(*pid, SIGKILL);
      waitpid(*pid, &status, 0);
      return absl::DeadlineExceededError(absl::StrCat(
          argv[0], " did not finish in ", absl::FormatDuration(timeout), ": ",
          ReadFile(log)));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  const std::string output = ReadFile(log);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(
        absl::StrCat(absl::StrJoin(argv, " "), " failed: ", output));
  }
  return output;
}

// The value of `field` in an INFO-style reply ("field:value" lines).
std::string InfoField(const std::string& info, const std::string& field) {
  for (absl::string_view line : absl::StrSplit(info, "\r\n")) {
    if (absl::StartsWith(line, field + ":")) {
      return std::string(line.substr(field.size() + 1));
    }
  }
  return "";
}

// Writes `contents` to `path`.
absl::Status WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream out(path);
  out << contents;
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

// Runs openssl with `args`, its log in `dir`.
absl::Status OpenSsl(const std::string& dir,
                     const std::vector<std::string>& args) {
  std::vector<std::string> argv = {FindProgram("openssl")};
  argv.insert(argv.end(), args.begin(), args.end());
  absl::StatusOr<std::string> done =
      RunToCompletion(argv, dir + "/openssl.log", {}, absl::Seconds(30));
  return done.status();
}

// A new EC P-256 key `name`.key and its certificate `name`.crt for
// `subject`, signed by the CA in `dir`, with the extensions `extensions`.
absl::Status SignedCertificate(const std::string& dir, const std::string& name,
                               const std::string& subject,
                               const std::string& extensions) {
  const std::string base = dir + "/" + name;
  absl::Status written = WriteFile(base + ".ext", extensions);
  if (!written.ok()) return written;
  absl::Status request = OpenSsl(
      dir, {"req", "-new", "-nodes", "-newkey", "ec", "-pkeyopt",
            "ec_paramgen_curve:prime256v1", "-keyout", base + ".key", "-out",
            base + ".csr", "-subj", subject});
  if (!request.ok()) return request;
  return OpenSsl(dir, {"x509", "-req", "-in", base + ".csr", "-CA",
                       dir + "/ca.crt", "-CAkey", dir + "/ca.key",
                       "-CAcreateserial", "-days", "2", "-out", base + ".crt",
                       "-extfile", base + ".ext"});
}

}  // namespace

pto::server::redis::TlsOptions TestCertificates::ClientOptions() const {
  pto::server::redis::TlsOptions options;
  options.ca_file = ca_file;
  options.cert_file = client_cert_file;
  options.key_file = client_key_file;
  return options;
}

absl::StatusOr<TestCertificates> MakeTestCertificates(const std::string& dir) {
  if (FindProgram("openssl").empty()) {
    return absl::FailedPreconditionError(
        "openssl is not installed (Debian package openssl)");
  }
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::InternalError(absl::StrCat("cannot create ", dir));
  }
  absl::Status ca = OpenSsl(
      dir, {"req", "-x509", "-new", "-nodes", "-newkey", "ec", "-pkeyopt",
            "ec_paramgen_curve:prime256v1", "-keyout", dir + "/ca.key",
            "-out", dir + "/ca.crt", "-days", "2", "-subj",
            "/CN=PTO test CA " + std::to_string(getpid())});
  if (!ca.ok()) return ca;
  // The node certificate is also the nodes' client certificate on the
  // cluster bus and for replication: no extendedKeyUsage restricts it.
  absl::Status server = SignedCertificate(
      dir, "server", "/CN=localhost",
      "basicConstraints=CA:FALSE\n"
      "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  if (!server.ok()) return server;
  absl::Status client = SignedCertificate(dir, "client", "/CN=ptod",
                                          "basicConstraints=CA:FALSE\n");
  if (!client.ok()) return client;
  TestCertificates certificates;
  certificates.ca_file = dir + "/ca.crt";
  certificates.server_cert_file = dir + "/server.crt";
  certificates.server_key_file = dir + "/server.key";
  certificates.client_cert_file = dir + "/client.crt";
  certificates.client_key_file = dir + "/client.key";
  return certificates;
}

bool RedisCluster::Available(std::string* why, bool tls) {
  if (tls && FindProgram("openssl").empty()) {
    *why =
        "openssl is not installed: install the Debian package openssl to run "
        "the Redis Cluster TLS tests";
    return false;
  }
  if (FindProgram("redis-server").empty()) {
    *why =
        "redis-server is not installed: install the Debian package "
        "redis-server (tools/setup.sh does) to run the Redis Cluster tests";
    return false;
  }
  if (FindProgram("redis-cli").empty()) {
    *why =
        "redis-cli is not installed: install the Debian package redis-tools "
        "(tools/setup.sh does) to run the Redis Cluster tests";
    return false;
  }
  return true;
}

absl::StatusOr<std::unique_ptr<RedisCluster>> RedisCluster::Start(
    const std::string& dir, const Options& options) {
  std::string why;
  if (!Available(&why, options.tls)) {
    return absl::FailedPreconditionError(why);
  }
  const int count = options.primaries * (1 + options.replicas_per_primary);
  absl::StatusOr<std::vector<int>> ports = FreePorts(count);
  if (!ports.ok()) return ports.status();
  std::unique_ptr<RedisCluster> cluster(new RedisCluster(options));
  if (options.tls) {
    absl::StatusOr<TestCertificates> certificates =
        MakeTestCertificates(dir + "/tls");
    if (!certificates.ok()) return certificates.status();
    cluster->certificates_ = *std::move(certificates);
    absl::StatusOr<std::shared_ptr<const pto::server::redis::TlsContext>>
        context = pto::server::redis::TlsContext::Create(
            cluster->certificates_.ClientOptions());
    if (!context.ok()) return context.status();
    cluster->tls_ = *std::move(context);
  }
  for (int port : *ports) {
    Node node;
    node.port = port;
    node.address = absl::StrCat("127.0.0.1:", port);
    node.dir = absl::StrCat(dir, "/", port);
    if (mkdir(node.dir.c_str(), 0700) != 0 && errno != EEXIST) {
      return absl::InternalError(absl::StrCat("cannot create ", node.dir));
    }
    const std::string timeout_ms =
        absl::StrCat(absl::ToInt64Milliseconds(options.node_timeout));
    std::ofstream conf(node.dir + "/redis.conf");
    if (options.tls) {
      const TestCertificates& tls = cluster->certificates_;
      conf << "port 0\n"
           << "tls-port " << port << "\n"
           << "tls-cert-file " << tls.server_cert_file << "\n"
           << "tls-key-file " << tls.server_key_file << "\n"
           << "tls-ca-cert-file " << tls.ca_file << "\n"
           << "tls-auth-clients yes\n"
           << "tls-cluster yes\n"
           << "tls-replication yes\n";
    } else {
      conf << "port " << port << "\n";
    }
    conf << "bind 127.0.0.1\n"
         << "protected-mode no\n"
         << "daemonize no\n"
         << "dir " << node.dir << "\n"
         << "logfile " << node.dir << "/redis.log\n"
         << "save \"\"\n"
         << "appendonly no\n"
         << "cluster-enabled yes\n"
         << "cluster-config-file nodes.conf\n"
         << "cluster-node-timeout " << timeout_ms << "\n"
         << "cluster-replica-validity-factor 0\n"
         << "maxmemory 64mb\n"
         << "maxmemory-policy allkeys-lru\n"
         << "user default off\n"
         << "user " << options.user << " on >" << options.password
         << " ~* &* +@all\n"
         << "masteruser " << options.user << "\n"
         << "masterauth " << options.password << "\n";
    conf.close();
    if (!conf) return absl::InternalError("cannot write redis.conf");
    cluster->nodes_.push_back(std::move(node));
  }
  for (Node& node : cluster->nodes_) {
    absl::Status launched = cluster->Launch(&node);
    if (!launched.ok()) return launched;
  }
  // Every node answers before the cluster is created.
  for (int i = 0; i < cluster->size(); ++i) {
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (true) {
      absl::StatusOr<std::unique_ptr<Connection>> c = cluster->Connect(i);
      if (c.ok()) break;
      if (absl::Now() > deadline) {
        return absl::UnavailableError(absl::StrCat(
            "redis-server on ", cluster->address(i), " did not start: ",
            c.status().message(), "; log: ",
            ReadFile(cluster->nodes_[i].dir + "/redis.log")));
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
  }
  std::vector<std::string> argv = {FindProgram("redis-cli"), "--user",
                                   options.user, "--no-auth-warning"};
  if (options.tls) {
    const TestCertificates& tls = cluster->certificates_;
    argv.insert(argv.end(),
                {"--tls", "--cacert", tls.ca_file, "--cert",
                 tls.client_cert_file, "--key", tls.client_key_file});
  }
  argv.insert(argv.end(), {"--cluster", "create"});
  for (const Node& node : cluster->nodes_) argv.push_back(node.address);
  argv.insert(argv.end(),
              {"--cluster-replicas",
               absl::StrCat(options.replicas_per_primary), "--cluster-yes"});
  absl::StatusOr<std::string> created =
      RunToCompletion(argv, dir + "/cluster-create.log",
                      {"REDISCLI_AUTH=" + options.password}, absl::Seconds(60));
  if (!created.ok()) return created.status();
  absl::Status healthy = cluster->WaitUntilHealthy(absl::Seconds(30));
  if (!healthy.ok()) return healthy;
  return cluster;
}

absl::Status RedisCluster::Launch(Node* node) {
  absl::StatusOr<pid_t> pid = Spawn(
      {FindProgram("redis-server"), node->dir + "/redis.conf"},
      node->dir + "/stdout.log");
  if (!pid.ok()) return pid.status();
  node->pid = *pid;
  return absl::OkStatus();
}

RedisCluster::~RedisCluster() { KillAll(); }

void RedisCluster::Kill(int node) {
  Node& n = nodes_[node];
  if (n.pid <= 0) return;
  kill(n.pid, SIGKILL);
  waitpid(n.pid, nullptr, 0);
  n.pid = -1;
}

void RedisCluster::KillAll() {
  for (int i = 0; i < size(); ++i) Kill(i);
}

absl::Status RedisCluster::Restart(int node) {
  Kill(node);
  absl::Status launched = Launch(&nodes_[node]);
  if (!launched.ok()) return launched;
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (!Connect(node).ok()) {
    if (absl::Now() > deadline) {
      return absl::UnavailableError(
          absl::StrCat("redis-server on ", address(node), " did not restart"));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  return absl::OkStatus();
}

std::vector<std::string> RedisCluster::seeds() const {
  std::vector<std::string> seeds;
  for (const Node& node : nodes_) seeds.push_back(node.address);
  return seeds;
}

ConnectionOptions RedisCluster::connection_options() const {
  ConnectionOptions options;
  options.user = options_.user;
  options.password = options_.password;
  options.connect_timeout = absl::Seconds(2);
  options.command_timeout = absl::Seconds(5);
  options.tls = tls_;
  return options;
}

absl::StatusOr<std::unique_ptr<Connection>> RedisCluster::Connect(
    int node) const {
  return Connection::Open(address(node), connection_options());
}

int RedisCluster::IndexOf(const std::string& address) const {
  for (int i = 0; i < size(); ++i) {
    if (nodes_[i].address == address) return i;
  }
  return -1;
}

absl::Status RedisCluster::FlushAll() {
  for (int i = 0; i < size(); ++i) {
    if (!running(i)) continue;
    absl::StatusOr<std::unique_ptr<Connection>> c = Connect(i);
    if (!c.ok()) return c.status();
    absl::StatusOr<Reply> role = (*c)->Command({"ROLE"});
    if (!role.ok()) return role.status();
    if (role->elements.empty() || role->elements[0].str != "master") continue;
    absl::StatusOr<Reply> flushed = (*c)->Command({"FLUSHALL"});
    if (!flushed.ok()) return flushed.status();
    if (flushed->type == Reply::kError) {
      return absl::InternalError(absl::StrCat(address(i), ": ", flushed->str));
    }
  }
  return absl::OkStatus();
}

absl::Status RedisCluster::WaitUntilHealthy(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  std::string last;
  while (true) {
    bool healthy = true;
    std::set<std::string> views;  // each node's sorted list of primaries
    for (int i = 0; i < size() && healthy; ++i) {
      if (nodes_[i].pid <= 0) continue;
      absl::StatusOr<std::unique_ptr<Connection>> c = Connect(i);
      if (!c.ok()) {
        last = std::string(c.status().message());
        healthy = false;
        break;
      }
      absl::StatusOr<Reply> info = (*c)->Command({"CLUSTER", "INFO"});
      if (!info.ok() || info->type != Reply::kString) {
        last = absl::StrCat(address(i), ": CLUSTER INFO failed");
        healthy = false;
        break;
      }
      if (InfoField(info->str, "cluster_state") != "ok" ||
          InfoField(info->str, "cluster_slots_ok") != "16384") {
        last = absl::StrCat(address(i), ": state ",
                            InfoField(info->str, "cluster_state"),
                            ", slots ok ",
                            InfoField(info->str, "cluster_slots_ok"));
        healthy = false;
        break;
      }
      absl::StatusOr<Reply> slots = (*c)->Command({"CLUSTER", "SLOTS"});
      if (!slots.ok() || slots->type != Reply::kArray) {
        healthy = false;
        break;
      }
      // The ranges with their primary and replicas; every running node must
      // be listed (gossip has reached this node).
      std::set<std::string> ranges;
      std::set<int64_t> listed;
      for (const Reply& range : slots->elements) {
        std::string nodes;
        for (size_t n = 2; n < range.elements.size(); ++n) {
          if (range.elements[n].elements.size() < 2) continue;
          const int64_t port = range.elements[n].elements[1].integer;
          listed.insert(port);
          absl::StrAppend(&nodes, n == 2 ? "" : ",", port);
        }
        ranges.insert(nodes);
      }
      views.insert(absl::StrJoin(ranges, ";"));
      int running = 0;
      for (const Node& n : nodes_) running += n.pid > 0 ? 1 : 0;
      if (static_cast<int>(listed.size()) != running) {
        last = absl::StrCat(address(i), " lists ", listed.size(), " of ",
                            running, " running nodes");
        healthy = false;
        break;
      }
      absl::StatusOr<Reply> role = (*c)->Command({"ROLE"});
      if (!role.ok() || role->type != Reply::kArray ||
          role->elements.empty()) {
        healthy = false;
        break;
      }
      if (role->elements[0].str == "slave" &&
          (role->elements.size() < 4 ||
           role->elements[3].str != "connected")) {
        last = absl::StrCat(address(i), ": replica not in sync yet");
        healthy = false;
      }
    }
    if (healthy && views.size() == 1) return absl::OkStatus();
    if (healthy) last = "nodes disagree on the slot map";
    if (absl::Now() > deadline) {
      return absl::UnavailableError(
          absl::StrCat("Redis Cluster not healthy after ",
                       absl::FormatDuration(timeout), ": ", last));
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
}

}  // namespace pto::testing
