// The Communicator over MPI (non-blocking MPI collectives), and the RAII
// session that initialises and finalises MPI for a command.
#pragma once

#include <mpi.h>

#include <memory>
#include <vector>

#include "executor/comm/communicator.h"

namespace axo {

// MPI_Init_thread on construction (when not already initialised),
// MPI_Finalize on destruction.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

 private:
  bool owns_ = false;
};

class MpiCommunicator : public Communicator {
 public:
  // Wraps `comm`; frees it on destruction when `owned`.
  explicit MpiCommunicator(MPI_Comm comm, bool owned = false);
  ~MpiCommunicator() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  MPI_Comm comm() const { return comm_; }

  RequestPtr start_all_reduce(float* data, size_t count) override;
  RequestPtr start_all_gather(const float* send, float* recv, size_t count_per_rank) override;
  RequestPtr start_all_gather_halves(const cpu::Half* send, cpu::Half* recv, size_t count_per_rank) override;
  RequestPtr start_reduce_scatter(const float* send, float* recv, size_t count_per_rank) override;
  RequestPtr start_broadcast(float* data, size_t count, int root) override;
  RequestPtr start_send(const float* data, size_t count, int peer, int tag) override;
  RequestPtr start_recv(float* data, size_t count, int peer, int tag) override;
  std::unique_ptr<Communicator> split(int color, int key) override;
  // Blocking MPI collectives: in Open MPI they take tuned algorithms that
  // beat the non-blocking ones for an operation nothing overlaps.
  void all_reduce(float* data, size_t count) override;
  void all_gather(const float* send, float* recv, size_t count_per_rank) override;
  void all_gather_halves(const cpu::Half* send, cpu::Half* recv, size_t count_per_rank) override;
  void reduce_scatter(const float* send, float* recv, size_t count_per_rank) override;
  void broadcast(float* data, size_t count, int root) override;

 private:
  MPI_Comm comm_;
  bool owned_;
  int rank_ = 0, size_ = 1;
};

// Waits until one of `requests` completes and returns its index (the
// message-driven scheduler's MPI_Waitany). Requests of this communicator go
// through MPI_Waitany; any other kind is polled. None may be null.
size_t wait_any(const std::vector<Request*>& requests);

}  // namespace axo
