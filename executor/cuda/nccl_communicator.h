// The Communicator over NCCL, for device buffers: every pointer passed to it
// is device memory of the current device. Bootstrapped over MPI (rank 0's
// unique id is broadcast), as AxoNN does; operations run on the
// communicator's own stream and their Requests are CUDA events.
#pragma once

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include "executor/comm/communicator.h"

namespace axo::cuda {

class NcclCommunicator : public Communicator {
 public:
  // One NCCL communicator over the ranks of `comm` (collective over them).
  explicit NcclCommunicator(MPI_Comm comm);
  ~NcclCommunicator() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  RequestPtr start_all_reduce(float* data, size_t count) override;
  RequestPtr start_all_gather(const float* send, float* recv, size_t count_per_rank) override;
  RequestPtr start_all_gather_halves(const cpu::Half* send, cpu::Half* recv, size_t count_per_rank) override;
  RequestPtr start_reduce_scatter(const float* send, float* recv, size_t count_per_rank) override;
  RequestPtr start_broadcast(float* data, size_t count, int root) override;
  RequestPtr start_send(const float* data, size_t count, int peer, int tag) override;
  RequestPtr start_recv(float* data, size_t count, int peer, int tag) override;
  std::unique_ptr<Communicator> split(int color, int key) override;

 private:
  RequestPtr record();
  MPI_Comm mpi_;
  ncclComm_t nccl_ = nullptr;
  cudaStream_t stream_ = nullptr;
  int rank_ = 0, size_ = 1;
};

}  // namespace axo::cuda
