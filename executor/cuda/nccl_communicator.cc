// Collectives over NCCL (see nccl_communicator.h).
#include "executor/cuda/nccl_communicator.h"

#include <stdexcept>
#include <string>

#include "executor/cuda/device.h"

namespace axo::cuda {

namespace {

void check_nccl(ncclResult_t result, const char* what) {
  if (result != ncclSuccess) {
    throw std::runtime_error(std::string("NCCL: ") + what + ": " + ncclGetErrorString(result));
  }
}

class EventRequest : public Request {
 public:
  explicit EventRequest(cudaStream_t stream) {
    check(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "cudaEventCreate");
    check(cudaEventRecord(event_, stream), "cudaEventRecord");
  }
  ~EventRequest() override { cudaEventDestroy(event_); }
  bool test() override { return cudaEventQuery(event_) == cudaSuccess; }
  void wait() override { check(cudaEventSynchronize(event_), "cudaEventSynchronize"); }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace

NcclCommunicator::NcclCommunicator(MPI_Comm comm) {
  MPI_Comm_dup(comm, &mpi_);
  MPI_Comm_rank(mpi_, &rank_);
  MPI_Comm_size(mpi_, &size_);
  ncclUniqueId id;
  if (rank_ == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, mpi_);
  check_nccl(ncclCommInitRank(&nccl_, size_, id, rank_), "ncclCommInitRank");
  check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
}

NcclCommunicator::~NcclCommunicator() {
  if (stream_) cudaStreamSynchronize(stream_), cudaStreamDestroy(stream_);
  if (nccl_) ncclCommDestroy(nccl_);
  int finalised = 0;
  MPI_Finalized(&finalised);
  if (!finalised) MPI_Comm_free(&mpi_);
}

RequestPtr NcclCommunicator::record() { return std::make_unique<EventRequest>(stream_); }

RequestPtr NcclCommunicator::start_all_reduce(float* data, size_t count) {
  check_nccl(ncclAllReduce(data, data, count, ncclFloat32, ncclSum, nccl_, stream_), "ncclAllReduce");
  return record();
}

RequestPtr NcclCommunicator::start_all_gather(const float* send, float* recv, size_t count_per_rank) {
  check_nccl(ncclAllGather(send, recv, count_per_rank, ncclFloat32, nccl_, stream_), "ncclAllGather");
  return record();
}

// A Half travels as its two bytes.
RequestPtr NcclCommunicator::start_all_gather_halves(const cpu::Half* send, cpu::Half* recv, size_t count_per_rank) {
  check_nccl(ncclAllGather(send, recv, count_per_rank * sizeof(cpu::Half), ncclUint8, nccl_, stream_), "ncclAllGather");
  return record();
}

RequestPtr NcclCommunicator::start_reduce_scatter(const float* send, float* recv, size_t count_per_rank) {
  check_nccl(ncclReduceScatter(send, recv, count_per_rank, ncclFloat32, ncclSum, nccl_, stream_),
             "ncclReduceScatter");
  return record();
}

RequestPtr NcclCommunicator::start_broadcast(float* data, size_t count, int root) {
  check_nccl(ncclBroadcast(data, data, count, ncclFloat32, root, nccl_, stream_), "ncclBroadcast");
  return record();
}

// NCCL matches sends and receives by order, not tag: callers keep one
// message in flight per peer and direction (pipeline stages do).
RequestPtr NcclCommunicator::start_send(const float* data, size_t count, int peer, int) {
  check_nccl(ncclSend(data, count, ncclFloat32, peer, nccl_, stream_), "ncclSend");
  return record();
}

RequestPtr NcclCommunicator::start_recv(float* data, size_t count, int peer, int) {
  check_nccl(ncclRecv(data, count, ncclFloat32, peer, nccl_, stream_), "ncclRecv");
  return record();
}

std::unique_ptr<Communicator> NcclCommunicator::split(int color, int key) {
  MPI_Comm sub = MPI_COMM_NULL;
  MPI_Comm_split(mpi_, color, key, &sub);
  auto result = std::make_unique<NcclCommunicator>(sub);
  MPI_Comm_free(&sub);
  return result;
}

}  // namespace axo::cuda
