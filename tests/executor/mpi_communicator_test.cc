// The MPI communicator's collectives, on the world and on split groups,
// checked element by element (runs under mpirun with 2 and 4 ranks).
// axo-test-ranks: 2 4
#include "executor/comm/mpi_communicator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "executor/comm/self_communicator.h"

namespace axo {
namespace {

void check_collectives(Communicator& c) {
  const int p = c.size(), r = c.rank();
  const size_t n = 6;
  std::vector<float> data(n);
  for (size_t i = 0; i < n; ++i) data[i] = float(r + 1) * float(i + 1);
  c.all_reduce(data.data(), n);
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(data[i], float(p * (p + 1) / 2) * float(i + 1));

  std::vector<float> mine(n, float(r)), gathered(n * size_t(p));
  c.all_gather(mine.data(), gathered.data(), n);
  for (size_t i = 0; i < gathered.size(); ++i) EXPECT_EQ(gathered[i], float(i / n));

  // 2-byte values move bit for bit, blocking and not.
  std::vector<cpu::Half> halves(n, cpu::Half{uint16_t(0xbf80 + r)}), gathered_halves(n * size_t(p));
  c.start_all_gather_halves(halves.data(), gathered_halves.data(), n)->wait();
  for (size_t i = 0; i < gathered_halves.size(); ++i) EXPECT_EQ(gathered_halves[i].bits, 0xbf80 + i / n);
  std::fill(gathered_halves.begin(), gathered_halves.end(), cpu::Half{});
  c.all_gather_halves(halves.data(), gathered_halves.data(), n);
  for (size_t i = 0; i < gathered_halves.size(); ++i) EXPECT_EQ(gathered_halves[i].bits, 0xbf80 + i / n);

  std::vector<float> full(n * size_t(p)), part(n);
  std::iota(full.begin(), full.end(), 0.0f);
  c.reduce_scatter(full.data(), part.data(), n);
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(part[i], float(p) * float(size_t(r) * n + i));

  std::vector<float> root(n, r == 0 ? 42.0f : 0.0f);
  c.broadcast(root.data(), n, 0);
  for (float v : root) EXPECT_EQ(v, 42.0f);

  if (p >= 2) {
    const int next = (r + 1) % p, previous = (r + p - 1) % p;
    std::vector<float> out(n, float(r)), in(n, -1.0f);
    RequestPtr receive = c.start_recv(in.data(), n, previous, 3);
    RequestPtr send = c.start_send(out.data(), n, next, 3);
    send->wait();
    receive->wait();
    for (float v : in) EXPECT_EQ(v, float(previous));
  }
}

TEST(MpiCommunicator, WorldCollectives) {
  MpiCommunicator world(MPI_COMM_WORLD);
  check_collectives(world);
}

TEST(MpiCommunicator, SplitGroupsRunAtOnce) {
  MpiCommunicator world(MPI_COMM_WORLD);
  if (world.size() < 4) GTEST_SKIP() << "needs 4 ranks";
  // Two groups of two at stride 2: {0, 2} and {1, 3}.
  std::unique_ptr<Communicator> group = world.split(world.rank() % 2, world.rank() / 2);
  EXPECT_EQ(group->size(), world.size() / 2);
  EXPECT_EQ(group->rank(), world.rank() / 2);
  check_collectives(*group);
}

TEST(SelfCommunicator, OneRankIsIdentity) {
  SelfCommunicator self;
  std::vector<float> data = {1, 2, 3}, out(3);
  self.all_reduce(data.data(), 3);
  self.all_gather(data.data(), out.data(), 3);
  EXPECT_EQ(out, data);
  const std::vector<cpu::Half> halves = {{1}, {0x8000}, {0xffff}};
  std::vector<cpu::Half> halves_out(3);
  self.all_gather_halves(halves.data(), halves_out.data(), 3);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(halves_out[i].bits, halves[i].bits);
  EXPECT_THROW(self.start_send(data.data(), 3, 1, 0), std::logic_error);
}

}  // namespace
}  // namespace axo
