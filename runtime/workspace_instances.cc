#include "runtime/workspace_instances.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <thread>

namespace pto::runtime {

namespace {

// Whether access `a` of `g` (a write) covers every element of a buffer of
// `shape`.
bool Covers(const ExpandGroup& g, const ExpandAccess& a, const std::vector<int64_t>& shape) {
  if (a.index.size() != shape.size()) return false;
  for (size_t j = 0; j < shape.size(); ++j) {
    const ExpandIndex& x = a.index[j];
    if (shape[j] == 1 || x.space_dim == kExpandWholeDim) continue;
    if (x.space_dim < 0 || x.space_dim >= static_cast<int>(g.space.size()) ||
        x.offset != 0) {
      return false;
    }
    const int64_t extent = x.div > 1 ? (g.space[x.space_dim] - 1) / x.div + 1
                                     : g.space[x.space_dim];
    if (extent < shape[j]) return false;
  }
  return true;
}

}  // namespace

int DefaultWorkspaceInstances() {
  // For measuring (1: the shared buffer of before); read once.
  static const int from_env = [] {
    const char* v = std::getenv("PTO_WORKSPACE_INSTANCES");
    return v != nullptr ? std::atoi(v) : 0;
  }();
  if (from_env > 0) return std::min(from_env, 64);
  const int threads = static_cast<int>(std::thread::hardware_concurrency());
  return std::clamp(2 * threads, 4, 64);
}

WorkspaceInstances PrivatizeWorkspaces(const std::vector<std::vector<LoopVisit>>& loops,
                                       int num_params,
                                       const std::vector<int64_t>& buffer_bytes,
                                       const std::vector<std::vector<int64_t>>& shapes,
                                       int k, std::vector<ExpandGroup>* groups) {
  WorkspaceInstances out;
  const int num_buffers = static_cast<int>(buffer_bytes.size());
  if (k <= 1 || loops.size() != groups->size() || shapes.size() != buffer_bytes.size()) {
    return out;
  }
  // The loops enclosing every access of each buffer (common prefix of the
  // accessing groups' paths); `seen` false = no access yet.
  std::vector<std::vector<LoopVisit>> common(num_buffers);
  std::vector<bool> seen(num_buffers, false);
  for (size_t g = 0; g < groups->size(); ++g) {
    for (const ExpandAccess& a : (*groups)[g].accesses) {
      if (a.buffer < num_params || a.buffer >= num_buffers) continue;
      std::vector<LoopVisit>& c = common[a.buffer];
      if (!seen[a.buffer]) {
        seen[a.buffer] = true;
        c = loops[g];
        continue;
      }
      size_t n = 0;
      while (n < c.size() && n < loops[g].size() && c[n].loop == loops[g][n].loop) ++n;
      c.resize(n);
    }
  }
  // The owner loop is the innermost common one (depth); its trip count
  // (flattened) bounds the instances.
  std::vector<int> depth(num_buffers, -1), instances(num_buffers, 1);
  std::vector<int64_t> trips(num_buffers, 0);
  for (size_t g = 0; g < groups->size(); ++g) {
    for (const ExpandAccess& a : (*groups)[g].accesses) {
      if (a.buffer < num_params || a.buffer >= num_buffers || common[a.buffer].empty()) {
        continue;
      }
      const size_t d = common[a.buffer].size() - 1;
      trips[a.buffer] = std::max(trips[a.buffer], loops[g][d].count + 1);
    }
  }
  // Each iteration of the owner must write the whole buffer before anything
  // reads it: its first access there is a write covering the buffer by a
  // group that does not also read it. Otherwise a value could flow from one
  // iteration to the next (an uninitialized carried tensor) and the buffer
  // stays shared.
  std::vector<int64_t> last_count(num_buffers, -1);
  std::vector<bool> private_ok(num_buffers, true);
  for (size_t g = 0; g < groups->size(); ++g) {
    const ExpandGroup& group = (*groups)[g];
    for (const ExpandAccess& a : group.accesses) {
      const int b = a.buffer;
      if (b < num_params || b >= num_buffers || common[b].empty() || !private_ok[b]) {
        continue;
      }
      const int64_t n = loops[g][common[b].size() - 1].count;
      if (n == last_count[b]) continue;
      last_count[b] = n;
      bool reads = false;
      for (const ExpandAccess& other : group.accesses) {
        reads = reads || (other.buffer == b && !other.write);
      }
      bool covers = false;
      for (const ExpandAccess& w : group.accesses) {
        if (w.buffer == b && w.write && Covers(group, w, shapes[b])) covers = true;
      }
      private_ok[b] = covers && !reads;
    }
  }
  int64_t budget = kMaxExtraWorkspaceBytes;
  std::vector<std::vector<int>> copies(num_buffers);
  int next = num_buffers;
  for (int b = num_params; b < num_buffers; ++b) {
    if (common[b].empty() || !private_ok[b]) continue;
    depth[b] = static_cast<int>(common[b].size()) - 1;
    int64_t n = std::min<int64_t>(k, trips[b]);
    const int64_t bytes = std::max<int64_t>(1, buffer_bytes[b]);
    n = std::min<int64_t>(n, 1 + budget / bytes);
    if (n <= 1) continue;
    budget -= (n - 1) * bytes;
    instances[b] = static_cast<int>(n);
    copies[b].push_back(b);
    for (int64_t i = 1; i < n; ++i) {
      copies[b].push_back(next++);
      out.copy_of.push_back(b);
    }
  }
  if (out.copy_of.empty()) return out;
  std::vector<int> identity(num_buffers);
  for (int b = 0; b < num_buffers; ++b) identity[b] = b;
  std::map<std::vector<int>, uint32_t> set_of;
  set_of[identity] = 0;
  out.buffer_sets.push_back(identity);
  out.group_set.assign(groups->size(), 0);
  for (size_t g = 0; g < groups->size(); ++g) {
    std::vector<int> set = identity;
    for (ExpandAccess& a : (*groups)[g].accesses) {
      if (a.buffer < num_params || a.buffer >= num_buffers || instances[a.buffer] <= 1) {
        continue;
      }
      const int b = a.buffer;
      const int64_t n = loops[g][depth[b]].count;
      set[b] = copies[b][static_cast<size_t>(n % instances[b])];
      a.buffer = set[b];
    }
    auto [it, added] = set_of.emplace(set, static_cast<uint32_t>(out.buffer_sets.size()));
    if (added) out.buffer_sets.push_back(std::move(set));
    out.group_set[g] = it->second;
  }
  return out;
}

}  // namespace pto::runtime
