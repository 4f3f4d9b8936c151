#include "client/ptoc/graph_io.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"

namespace pto::ptoc {
namespace {

// Keeps the first parse error with its position.
class FirstError : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (message_.empty()) {
      // The parser counts from 0; editors from 1.
      message_ = absl::StrFormat("line %d, column %d: %s", line + 1,
                                 column + 1, message);
    }
  }
  const std::string& message() const { return message_; }

 private:
  std::string message_;
};

}  // namespace

absl::StatusOr<pto::v1::Graph> ParseGraphText(const std::string& text,
                                              const std::string& source) {
  pto::v1::Graph graph;
  google::protobuf::TextFormat::Parser parser;
  FirstError errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(text, &graph)) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": not a pto.v1.Graph in text format: ",
                     errors.message().empty() ? "parse error"
                                              : errors.message()));
  }
  return graph;
}

absl::StatusOr<pto::v1::Graph> ReadGraphFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("cannot open graph file '", path, "': ", strerror(errno)));
  }
  std::stringstream contents;
  contents << in.rdbuf();
  if (absl::EndsWith(path, ".pb")) {
    pto::v1::Graph graph;
    if (!graph.ParseFromString(contents.str())) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": not a pto.v1.Graph in binary format"));
    }
    return graph;
  }
  return ParseGraphText(contents.str(), path);
}

absl::StatusOr<pto::v1::KernelBinary> ReadBinaryFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot open kernel binary '", path,
                                            "': ", strerror(errno)));
  }
  std::stringstream contents;
  contents << in.rdbuf();
  pto::v1::KernelBinary binary;
  if (!binary.ParseFromString(contents.str())) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a serialized pto.v1.KernelBinary"));
  }
  return binary;
}

absl::Status WriteBinaryFile(const std::string& path,
                             const pto::v1::KernelBinary& binary) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !binary.SerializeToOstream(&out)) {
    return absl::InternalError(
        absl::StrCat("cannot write kernel binary to '", path, "': ",
                     strerror(errno)));
  }
  out.close();
  if (!out) {
    return absl::InternalError(
        absl::StrCat("cannot write kernel binary to '", path, "'"));
  }
  return absl::OkStatus();
}

}  // namespace pto::ptoc
