#include "client/cpp/rendezvous.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "runtime/sha256.h"

namespace pto::client {

std::string RoutingKey(const pto::v1::CompileRequest& request) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream out(&stream);
    out.SetSerializationDeterministic(true);  // map entries sorted by key
    request.SerializeToCodedStream(&out);
  }
  return pto::runtime::Sha256(bytes);
}

uint64_t RendezvousWeight(absl::string_view address, absl::string_view key) {
  const std::string digest =
      pto::runtime::Sha256(absl::StrCat(address, absl::string_view("\0", 1), key));
  uint64_t weight = 0;
  for (int i = 0; i < 8; ++i) {
    weight = (weight << 8) | static_cast<unsigned char>(digest[i]);
  }
  return weight;
}

std::vector<size_t> RendezvousOrder(const std::vector<std::string>& addresses,
                                    absl::string_view key) {
  std::vector<uint64_t> weights(addresses.size());
  for (size_t i = 0; i < addresses.size(); ++i) {
    weights[i] = RendezvousWeight(addresses[i], key);
  }
  std::vector<size_t> order(addresses.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (weights[a] != weights[b]) return weights[a] > weights[b];
    return addresses[a] < addresses[b];
  });
  return order;
}

}  // namespace pto::client
