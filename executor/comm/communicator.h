// A group of ranks and the collectives training runs over it.
//
// Every collective sums or moves float32 buffers, counted in elements, but
// one: all_gather_halves moves 2-byte values (bf16 or fp16 weights, gathered
// as stored, as the cost model prices them). Each operation starts
// non-blocking and returns a Request; the blocking forms start and wait.
// Implementations: MPI (mpi_communicator.h) and a single-rank communicator
// whose operations are local copies (self_communicator.h). An NCCL
// implementation joins them with the CUDA backend.
//
// Shapes, for a group of p ranks:
//   all_reduce(data[n])                          data ← Σ over ranks of data
//   all_gather(send[n], recv[p·n])               recv[i·n, (i+1)·n) ← send of rank i
//   all_gather_halves(send[n], recv[p·n])        the same, of 2-byte values, bit for bit
//   reduce_scatter(send[p·n], recv[n])           recv ← Σ over ranks of send[rank·n, (rank+1)·n)
//   broadcast(data[n], root)                     data ← data of root
//   send(data[n], peer, tag) / recv(data[n], peer, tag)
#pragma once

#include <cstddef>
#include <memory>

#include "executor/cpu/half.h"

namespace axo {

// An operation in flight. Wait (or test until true) before dropping it or
// touching its buffers; dropping an unfinished request abandons it.
class Request {
 public:
  virtual ~Request() = default;
  // True once the operation has completed (then its buffers may be used).
  virtual bool test() = 0;
  virtual void wait() = 0;
};
using RequestPtr = std::unique_ptr<Request>;

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  virtual RequestPtr start_all_reduce(float* data, size_t count) = 0;
  virtual RequestPtr start_all_gather(const float* send, float* recv, size_t count_per_rank) = 0;
  virtual RequestPtr start_all_gather_halves(const cpu::Half* send, cpu::Half* recv, size_t count_per_rank) = 0;
  virtual RequestPtr start_reduce_scatter(const float* send, float* recv, size_t count_per_rank) = 0;
  virtual RequestPtr start_broadcast(float* data, size_t count, int root) = 0;
  virtual RequestPtr start_send(const float* data, size_t count, int peer, int tag) = 0;
  virtual RequestPtr start_recv(float* data, size_t count, int peer, int tag) = 0;

  // A sub-group of the ranks passing the same `color`, ordered by `key`.
  virtual std::unique_ptr<Communicator> split(int color, int key) = 0;

  // Blocking forms: by default start and wait; an implementation may use a
  // faster blocking path (MPI's blocking collectives are).
  virtual void all_reduce(float* data, size_t count) { start_all_reduce(data, count)->wait(); }
  virtual void all_gather(const float* send, float* recv, size_t count_per_rank) {
    start_all_gather(send, recv, count_per_rank)->wait();
  }
  virtual void all_gather_halves(const cpu::Half* send, cpu::Half* recv, size_t count_per_rank) {
    start_all_gather_halves(send, recv, count_per_rank)->wait();
  }
  virtual void reduce_scatter(const float* send, float* recv, size_t count_per_rank) {
    start_reduce_scatter(send, recv, count_per_rank)->wait();
  }
  virtual void broadcast(float* data, size_t count, int root) {
    start_broadcast(data, count, root)->wait();
  }
  void send(const float* data, size_t count, int peer, int tag) {
    start_send(data, count, peer, tag)->wait();
  }
  void recv(float* data, size_t count, int peer, int tag) { start_recv(data, count, peer, tag)->wait(); }
};

}  // namespace axo
