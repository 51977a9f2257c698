// Collectives over MPI (see mpi_communicator.h).
#include "executor/comm/mpi_communicator.h"

#include <climits>
#include <cstdint>
#include <thread>
#include <stdexcept>
#include <string>

namespace axo {

namespace {

class MpiRequest : public Request {
 public:
  MpiRequest() = default;
  // Never blocks: a request dropped unfinished is abandoned. Callers wait
  // before they drop one; only a run about to abort (a calibration timeout)
  // drops an unfinished one, and waiting there would hang.
  ~MpiRequest() override = default;
  MPI_Request* handle() { return &request_; }
  bool test() override {
    int done = 0;
    MPI_Test(&request_, &done, MPI_STATUS_IGNORE);
    return done != 0;
  }
  void wait() override { MPI_Wait(&request_, MPI_STATUS_IGNORE); }

 private:
  MPI_Request request_ = MPI_REQUEST_NULL;
};

int checked_count(size_t count) {
  if (count > size_t(INT_MAX)) {
    throw std::runtime_error("MPI communicator: " + std::to_string(count) +
                             " elements exceed MPI's int count");
  }
  return int(count);
}

// A Half travels as its 16 bits.
const MPI_Datatype kHalfType = MPI_UINT16_T;
static_assert(sizeof(cpu::Half) == sizeof(uint16_t));

void check(int code, const char* what) {
  if (code != MPI_SUCCESS) throw std::runtime_error(std::string("MPI: ") + what + " failed");
}

// The all-gathers of `count` elements of `type` a rank, non-blocking and blocking.
RequestPtr start_all_gather_of(const void* send, void* recv, size_t count, MPI_Datatype type, MPI_Comm comm) {
  auto request = std::make_unique<MpiRequest>();
  const int n = checked_count(count);
  check(MPI_Iallgather(send, n, type, recv, n, type, comm, request->handle()), "MPI_Iallgather");
  return request;
}

void all_gather_of(const void* send, void* recv, size_t count, MPI_Datatype type, MPI_Comm comm) {
  const int n = checked_count(count);
  check(MPI_Allgather(send, n, type, recv, n, type, comm), "MPI_Allgather");
}

}  // namespace

MpiSession::MpiSession(int* argc, char*** argv) {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) {
    int provided = 0;
    check(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    owns_ = true;
  }
}

MpiSession::~MpiSession() {
  int finalised = 0;
  MPI_Finalized(&finalised);
  if (owns_ && !finalised) MPI_Finalize();
}

MpiCommunicator::MpiCommunicator(MPI_Comm comm, bool owned) : comm_(comm), owned_(owned) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

MpiCommunicator::~MpiCommunicator() {
  int finalised = 0;
  MPI_Finalized(&finalised);
  if (owned_ && !finalised) MPI_Comm_free(&comm_);
}

RequestPtr MpiCommunicator::start_all_reduce(float* data, size_t count) {
  auto request = std::make_unique<MpiRequest>();
  check(MPI_Iallreduce(MPI_IN_PLACE, data, checked_count(count), MPI_FLOAT, MPI_SUM, comm_,
                       request->handle()),
        "MPI_Iallreduce");
  return request;
}

RequestPtr MpiCommunicator::start_all_gather(const float* send, float* recv, size_t count_per_rank) {
  return start_all_gather_of(send, recv, count_per_rank, MPI_FLOAT, comm_);
}

RequestPtr MpiCommunicator::start_all_gather_halves(const cpu::Half* send, cpu::Half* recv, size_t count_per_rank) {
  return start_all_gather_of(send, recv, count_per_rank, kHalfType, comm_);
}

RequestPtr MpiCommunicator::start_reduce_scatter(const float* send, float* recv,
                                                 size_t count_per_rank) {
  auto request = std::make_unique<MpiRequest>();
  check(MPI_Ireduce_scatter_block(send, recv, checked_count(count_per_rank), MPI_FLOAT, MPI_SUM,
                                  comm_, request->handle()),
        "MPI_Ireduce_scatter_block");
  return request;
}

RequestPtr MpiCommunicator::start_broadcast(float* data, size_t count, int root) {
  auto request = std::make_unique<MpiRequest>();
  check(MPI_Ibcast(data, checked_count(count), MPI_FLOAT, root, comm_, request->handle()),
        "MPI_Ibcast");
  return request;
}

RequestPtr MpiCommunicator::start_send(const float* data, size_t count, int peer, int tag) {
  auto request = std::make_unique<MpiRequest>();
  check(MPI_Isend(data, checked_count(count), MPI_FLOAT, peer, tag, comm_, request->handle()),
        "MPI_Isend");
  return request;
}

RequestPtr MpiCommunicator::start_recv(float* data, size_t count, int peer, int tag) {
  auto request = std::make_unique<MpiRequest>();
  check(MPI_Irecv(data, checked_count(count), MPI_FLOAT, peer, tag, comm_, request->handle()),
        "MPI_Irecv");
  return request;
}

void MpiCommunicator::all_reduce(float* data, size_t count) {
  check(MPI_Allreduce(MPI_IN_PLACE, data, checked_count(count), MPI_FLOAT, MPI_SUM, comm_),
        "MPI_Allreduce");
}

void MpiCommunicator::all_gather(const float* send, float* recv, size_t count_per_rank) {
  all_gather_of(send, recv, count_per_rank, MPI_FLOAT, comm_);
}

void MpiCommunicator::all_gather_halves(const cpu::Half* send, cpu::Half* recv, size_t count_per_rank) {
  all_gather_of(send, recv, count_per_rank, kHalfType, comm_);
}

void MpiCommunicator::reduce_scatter(const float* send, float* recv, size_t count_per_rank) {
  check(MPI_Reduce_scatter_block(send, recv, checked_count(count_per_rank), MPI_FLOAT, MPI_SUM, comm_),
        "MPI_Reduce_scatter_block");
}

void MpiCommunicator::broadcast(float* data, size_t count, int root) {
  check(MPI_Bcast(data, checked_count(count), MPI_FLOAT, root, comm_), "MPI_Bcast");
}

std::unique_ptr<Communicator> MpiCommunicator::split(int color, int key) {
  MPI_Comm sub = MPI_COMM_NULL;
  check(MPI_Comm_split(comm_, color, key, &sub), "MPI_Comm_split");
  return std::make_unique<MpiCommunicator>(sub, true);
}

size_t wait_any(const std::vector<Request*>& requests) {
  if (requests.empty()) throw std::logic_error("wait_any needs at least one request");
  std::vector<MpiRequest*> mpi;
  for (Request* r : requests) {
    if (auto* m = dynamic_cast<MpiRequest*>(r)) mpi.push_back(m);
  }
  if (mpi.size() == requests.size()) {
    std::vector<MPI_Request> handles;
    for (MpiRequest* m : mpi) handles.push_back(*m->handle());
    int index = MPI_UNDEFINED;
    check(MPI_Waitany(int(handles.size()), handles.data(), &index, MPI_STATUS_IGNORE), "MPI_Waitany");
    if (index == MPI_UNDEFINED) throw std::logic_error("wait_any: every request had already completed");
    for (size_t i = 0; i < mpi.size(); ++i) *mpi[i]->handle() = handles[i];
    return size_t(index);
  }
  for (;;) {
    for (size_t i = 0; i < requests.size(); ++i) {
      if (requests[i]->test()) return i;
    }
    std::this_thread::yield();
  }
}

}  // namespace axo
