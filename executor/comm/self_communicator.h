// The Communicator of a group of one rank: reductions are identities, gathers
// and scatters copies, and point-to-point has no peer (an error).
#pragma once

#include "executor/comm/communicator.h"

namespace axo {

class SelfCommunicator : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  RequestPtr start_all_reduce(float* data, size_t count) override;
  RequestPtr start_all_gather(const float* send, float* recv, size_t count_per_rank) override;
  RequestPtr start_all_gather_halves(const cpu::Half* send, cpu::Half* recv, size_t count_per_rank) override;
  RequestPtr start_reduce_scatter(const float* send, float* recv, size_t count_per_rank) override;
  RequestPtr start_broadcast(float* data, size_t count, int root) override;
  RequestPtr start_send(const float* data, size_t count, int peer, int tag) override;
  RequestPtr start_recv(float* data, size_t count, int peer, int tag) override;
  std::unique_ptr<Communicator> split(int color, int key) override;
};

}  // namespace axo
