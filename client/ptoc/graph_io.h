// Reading graphs and writing kernel binaries as files, with errors that say
// which file and where in it.
#ifndef PTO_CLIENT_PTOC_GRAPH_IO_H_
#define PTO_CLIENT_PTOC_GRAPH_IO_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pto/v1/graph.pb.h"
#include "pto/v1/kernel.pb.h"

namespace pto::ptoc {

// A pto.v1.Graph from `path`: proto text format, or binary wire format when
// the name ends in ".pb". Parse errors carry the line and column.
absl::StatusOr<pto::v1::Graph> ReadGraphFile(const std::string& path);

// Parses proto text; `source` names it in errors.
absl::StatusOr<pto::v1::Graph> ParseGraphText(const std::string& text,
                                              const std::string& source);

// A serialized pto.v1.KernelBinary from `path`.
absl::StatusOr<pto::v1::KernelBinary> ReadBinaryFile(const std::string& path);

// Serializes `binary` to `path` (replacing it).
absl::Status WriteBinaryFile(const std::string& path,
                             const pto::v1::KernelBinary& binary);

}  // namespace pto::ptoc

#endif  // PTO_CLIENT_PTOC_GRAPH_IO_H_
