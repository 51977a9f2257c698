// A one-rank group (see self_communicator.h).
#include "executor/comm/self_communicator.h"

#include <algorithm>
#include <stdexcept>

namespace axo {

namespace {

class DoneRequest : public Request {
 public:
  bool test() override { return true; }
  void wait() override {}
};

RequestPtr done() { return std::make_unique<DoneRequest>(); }

}  // namespace

RequestPtr SelfCommunicator::start_all_reduce(float*, size_t) { return done(); }

RequestPtr SelfCommunicator::start_all_gather(const float* send, float* recv, size_t count) {
  if (send != recv) std::copy(send, send + count, recv);
  return done();
}

RequestPtr SelfCommunicator::start_all_gather_halves(const cpu::Half* send, cpu::Half* recv, size_t count) {
  if (send != recv) std::copy(send, send + count, recv);
  return done();
}

RequestPtr SelfCommunicator::start_reduce_scatter(const float* send, float* recv, size_t count) {
  if (send != recv) std::copy(send, send + count, recv);
  return done();
}

RequestPtr SelfCommunicator::start_broadcast(float*, size_t, int) { return done(); }

RequestPtr SelfCommunicator::start_send(const float*, size_t, int peer, int) {
  throw std::logic_error("a one-rank group has no peer " + std::to_string(peer) + " to send to");
}

RequestPtr SelfCommunicator::start_recv(float*, size_t, int peer, int) {
  throw std::logic_error("a one-rank group has no peer " + std::to_string(peer) + " to receive from");
}

std::unique_ptr<Communicator> SelfCommunicator::split(int, int) {
  return std::make_unique<SelfCommunicator>();
}

}  // namespace axo
