// Byte sizes as text, both ways.
#include "model/byte_size.h"

#include <gtest/gtest.h>

#include "model/error.h"

namespace axo {
namespace {

TEST(ByteSize, FormatsInBinaryUnits) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(12.0 * (1 << 20)), "12.00 MiB");
  EXPECT_EQ(format_bytes(80.0 * (1ull << 30)), "80.00 GiB");
}

TEST(ByteSize, ParsesBinaryAndDecimalUnits) {
  EXPECT_EQ(parse_bytes("1048576", "--x"), 1048576);
  EXPECT_EQ(parse_bytes("512MiB", "--x"), 512ll << 20);
  EXPECT_EQ(parse_bytes("80GiB", "--x"), 80ll << 30);
  EXPECT_EQ(parse_bytes("2.5GB", "--x"), 2500000000ll);
  EXPECT_EQ(parse_bytes("64 KiB", "--x"), 65536);
}

TEST(ByteSize, RejectsWhatIsNotASize) {
  for (const char* text : {"", "MiB", "12 parsecs", "-5MiB", "0", "1e30GB", "nan"}) {
    try {
      parse_bytes(text, "--device-memory");
      FAIL() << "accepted '" << text << "'";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--device-memory: expected a positive size"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace axo
