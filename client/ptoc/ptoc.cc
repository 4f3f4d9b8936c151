// ptoc: compile a Tensor graph from the command line, look at every stage,
// and check the kernel against the reference evaluator.
//
//   ptoc --graph=examples/graphs/add_exp.pbtxt --print=tensor,pto,key --run
//   ptoc --graph=g.pbtxt --target=host-x86_64 --output=kernel.bin
//
// Exit status: 0 on success (and PASS with --run), 1 when compiling,
// loading, running or checking fails, 2 on bad usage.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "client/ptoc/check.h"
#include "client/ptoc/graph_io.h"
#include "compiler/compile.h"
#include "runtime/executor.h"
#include "runtime/kernel.h"

ABSL_FLAG(std::string, graph, "",
          "Tensor graph to compile: a pto.v1.Graph in proto text format "
          "(binary when the name ends in .pb).");
ABSL_FLAG(std::string, target, "host",
          "Target: \"host\" (this machine's ISA level), a concrete name "
          "such as host-x86_64, or ascend-a2a3 (PTO-ISA code; without CANN "
          "its CPU simulation build, ascend-a2a3-cpusim).");
ABSL_FLAG(std::vector<std::string>, print, {},
          "What to print, comma separated: tensor, tile, block, execute, pto, "
          "cpp (the IR levels, PTO text and generated C++), ascend (the "
          "PTO-ISA source of an Ascend target), key, stages.");
ABSL_FLAG(std::vector<std::string>, option, {},
          "Compile options as name=value, comma separated (e.g. "
          "opt_level=3).");
ABSL_FLAG(std::string, binary, "",
          "Use this serialized pto.v1.KernelBinary (e.g. from ptod or an "
          "earlier --output) instead of compiling; --graph is still the "
          "graph it was compiled from (for --run). --print: pto, key only.");
ABSL_FLAG(std::string, output, "",
          "Write the pto.v1.KernelBinary (serialized) to this file.");
ABSL_FLAG(bool, run, false,
          "Run the kernel on random inputs and compare it with the reference "
          "evaluator; prints max abs/rel error and PASS or FAIL.");
ABSL_FLAG(uint64_t, seed, 1, "Seed of the random inputs of --run.");
ABSL_FLAG(std::string, intermediates, "storage",
          "With --run: what the reference rounds each op's result to: "
          "storage (the value's dtype, as kernels do), compute (FP32) or "
          "double (no rounding).");
ABSL_FLAG(std::string, trace, "",
          "With --run: write the run's schedule (one event per task and "
          "worker) to this file as Chrome trace JSON, for Perfetto.");

namespace pto::ptoc {
namespace {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

const std::vector<std::string>& DumpNames() {
  static const auto* names = new std::vector<std::string>{
      "tensor", "tile", "block", "execute", "pto", "cpp"};
  return *names;
}

int Fail(const absl::Status& status) {
  std::cerr << "ptoc: " << status << "\n";
  return kExitFailure;
}

int Usage(const std::string& message) {
  std::cerr << "ptoc: " << message << "\n"
            << "usage: ptoc --graph=FILE [--target=host] [--print=...] "
               "[--output=FILE] [--run]\n";
  return kExitUsage;
}

int Main() {
  const std::string graph_path = absl::GetFlag(FLAGS_graph);
  if (graph_path.empty()) return Usage("--graph is required");

  std::set<std::string> print;
  for (const std::string& p : absl::GetFlag(FLAGS_print)) {
    if (p.empty()) continue;
    const bool known = p == "key" || p == "stages" || p == "ascend" ||
                       std::count(DumpNames().begin(), DumpNames().end(), p);
    if (!known) {
      return Usage(absl::StrCat("--print: unknown item '", p, "' (known: ",
                                absl::StrJoin(DumpNames(), ", "),
                                ", ascend, key, stages)"));
    }
    print.insert(p);
  }
  pto::compiler::CompileOptions options;
  for (const std::string& kv : absl::GetFlag(FLAGS_option)) {
    if (kv.empty()) continue;
    std::vector<std::string> parts = absl::StrSplit(kv, absl::MaxSplits('=', 1));
    if (parts.size() != 2 || parts[0].empty()) {
      return Usage(absl::StrCat("--option: expected name=value, got '", kv,
                                "'"));
    }
    options[parts[0]] = parts[1];
  }

  reference::ReferenceOptions reference;
  const std::string intermediates = absl::GetFlag(FLAGS_intermediates);
  using I = reference::ReferenceOptions::Intermediates;
  if (intermediates == "compute") {
    reference.intermediates = I::kCompute;
  } else if (intermediates == "storage") {
    reference.intermediates = I::kStorage;
  } else if (intermediates == "double") {
    reference.intermediates = I::kDouble;
  } else {
    return Usage(absl::StrCat("--intermediates: '", intermediates,
                              "' is not one of compute, storage, double"));
  }

  const std::string binary_path = absl::GetFlag(FLAGS_binary);
  if (!binary_path.empty()) {
    for (const std::string& p : print) {
      if (p != "pto" && p != "key") {
        return Usage(absl::StrCat("--print=", p, " needs a compile; with "
                                  "--binary only pto and key can be printed"));
      }
    }
  }

  absl::StatusOr<pto::v1::Graph> graph = ReadGraphFile(graph_path);
  if (!graph.ok()) return Fail(graph.status());

  absl::StatusOr<pto::compiler::CompileResult> result;
  if (binary_path.empty()) {
    pto::compiler::CompileSettings settings;
    settings.keep_dumps = !print.empty();
    result = pto::compiler::Compile(*graph, absl::GetFlag(FLAGS_target),
                                    options, settings);
    if (!result.ok()) return Fail(result.status());
  } else {
    // A binary from elsewhere: what the compiler would have returned, minus
    // the dumps and stage times.
    absl::StatusOr<pto::v1::KernelBinary> binary = ReadBinaryFile(binary_path);
    if (!binary.ok()) return Fail(binary.status());
    result = pto::compiler::CompileResult();
    result->key = binary->key();
    result->dumps["pto"] = binary->pto_text();
    result->binary = *std::move(binary);
  }

  for (const std::string& name : DumpNames()) {
    if (!print.count(name)) continue;
    auto it = result->dumps.find(name);
    std::cout << "==== " << name << " ====\n";
    if (it == result->dumps.end()) {
      std::cout << "(the compiler returned no '" << name << "' dump)\n";
    } else {
      std::cout << it->second;
      if (!it->second.empty() && it->second.back() != '\n') std::cout << "\n";
    }
  }
  if (print.count("ascend")) {
    // The target source of an Ascend target is its PTO-ISA C++.
    if (!absl::StartsWith(result->binary.target(), "ascend")) {
      return Usage(absl::StrCat("--print=ascend needs an Ascend target (--target=ascend-a2a3); "
                                "this compile's target is ", result->binary.target()));
    }
    auto it = result->dumps.find("cpp");
    std::cout << "==== ascend ====\n"
              << (it == result->dumps.end() ? "(the compiler returned no source)\n"
                                            : it->second);
  }
  if (print.count("stages")) {
    std::cout << "==== stages ====\n";
    for (const auto& stage : result->stages) {
      std::cout << stage.stage << ": "
                << absl::FormatDuration(stage.duration) << "\n";
    }
  }
  if (print.count("key")) {
    std::cout << "key: " << result->key << "\n"
              << "target: " << result->binary.target() << "\n";
  }

  const std::string output = absl::GetFlag(FLAGS_output);
  if (!output.empty()) {
    absl::Status written = WriteBinaryFile(output, result->binary);
    if (!written.ok()) return Fail(written);
    std::cout << "wrote " << output << " ("
              << result->binary.native_payload().size()
              << " bytes of native code, "
              << result->binary.execute_graph().tasks_size() << " tasks)\n";
  }

  if (absl::GetFlag(FLAGS_run)) {
    auto kernel = pto::runtime::Kernel::Load(result->binary);
    if (!kernel.ok()) return Fail(kernel.status());
    CheckOptions check;
    check.seed = absl::GetFlag(FLAGS_seed);
    check.reference = reference;
    std::vector<pto::runtime::TaskEvent> events;
    pto::runtime::RunOptions run_options;
    const std::string trace_path = absl::GetFlag(FLAGS_trace);
    if (!trace_path.empty()) {
      run_options.trace = &events;
      check.run_options = &run_options;
    }
    auto report = RunAndCheck(*graph, **kernel, check);
    if (!report.ok()) return Fail(report.status());
    if (!trace_path.empty()) {
      std::ofstream out(trace_path, std::ios::trunc);
      out << pto::runtime::Executor::Default().ChromeTraceJson(events);
      out.close();
      if (!out) {
        return Fail(absl::InternalError(
            absl::StrCat("cannot write trace to '", trace_path, "'")));
      }
      std::cout << "wrote trace " << trace_path << " (" << events.size()
                << " tasks)\n";
    }
    std::cout << report->Summary();
    if (!report->pass()) return kExitFailure;
  }
  return 0;
}

}  // namespace
}  // namespace pto::ptoc

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Compiles a PTO Tensor graph, prints its IR levels, and runs it against "
      "a reference.\nusage: ptoc --graph=FILE [--target=host] "
      "[--print=tensor,tile,block,execute,pto,cpp,key,stages] "
      "[--output=FILE] [--run]");
  std::vector<char*> rest = absl::ParseCommandLine(argc, argv);
  if (rest.size() > 1) {
    return pto::ptoc::Usage(
        absl::StrCat("unexpected argument '", rest[1], "'"));
  }
  return pto::ptoc::Main();
}
