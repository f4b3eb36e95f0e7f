// .npy reading and writing: a round trip per element type and one test per refusal.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "src/model/invalid_input.hpp"
#include "src/harness/npy.hpp"

namespace pg {
namespace {

// A file with the given header text (padded like NumPy's) and payload size.
std::vector<unsigned char> file_with(const std::string& dict, size_t payload, unsigned char major = 1) {
  std::string text = dict;
  text.append((64 - (10 + text.size() + 1) % 64) % 64, ' ');
  text.push_back('\n');
  std::vector<unsigned char> out = {0x93, 'N', 'U', 'M', 'P', 'Y', major, 0};
  out.push_back(static_cast<unsigned char>(text.size() & 0xff));
  out.push_back(static_cast<unsigned char>(text.size() >> 8));
  if (major != 1) out.insert(out.end(), {0, 0});
  out.insert(out.end(), text.begin(), text.end());
  out.resize(out.size() + payload, 7);
  return out;
}

std::string refusal(const std::vector<unsigned char>& bytes) {
  try {
    parse_npy(bytes, "t.npy");
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "";
}

std::string refusal_of_missing(const std::string& path) {
  try {
    read_npy(path);
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "";
}

bool says(const std::string& message, const std::string& part) { return message.find(part) != std::string::npos; }

TEST(Npy, RoundTripsEveryType) {
  for (NpyType t : {NpyType::f16, NpyType::bf16, NpyType::f32, NpyType::f64, NpyType::i32, NpyType::i64, NpyType::u8}) {
    NpyArray a;
    a.header.type = t;
    a.header.shape = {2, 3, 1};
    for (int i = 0; i < 6 * npy_type_size(t); ++i) a.data.push_back(static_cast<unsigned char>(i * 37));
    const std::vector<unsigned char> bytes = format_npy(a);
    EXPECT_EQ(bytes.size() % 64, a.data.size() % 64) << "header is padded to 64 bytes";
    const NpyArray b = parse_npy(bytes, "t.npy");
    EXPECT_EQ(b.header.type, t) << npy_type_name(t);
    EXPECT_EQ(b.header.shape, a.header.shape);
    EXPECT_EQ(b.data, a.data);
  }
}

TEST(Npy, ReadsWhatNumPyWrites) {
  const NpyArray a = parse_npy(file_with("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 12), "t.npy");
  EXPECT_EQ(a.header.type, NpyType::f32);
  EXPECT_EQ(a.header.shape, std::vector<int64_t>{3});
  const NpyArray scalar = parse_npy(file_with("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", 8), "t.npy");
  EXPECT_EQ(scalar.header.elements(), 1);
  const NpyArray v2 = parse_npy(file_with("{'descr': '|V2', 'fortran_order': False, 'shape': (0, 4), }", 0, 2), "t.npy");
  EXPECT_EQ(v2.header.type, NpyType::bf16);
  EXPECT_EQ(v2.header.elements(), 0);
}

TEST(Npy, FileRoundTripAndHeaderOnlyRead) {
  NpyArray a;
  a.header.type = NpyType::i64;
  a.header.shape = {1, 2};
  a.data.resize(16, 1);
  const std::string path = (std::filesystem::temp_directory_path() / "poolgrad_npy_test.npy").string();
  write_npy(path, a);
  EXPECT_EQ(read_npy_header(path).shape, a.header.shape);
  EXPECT_EQ(read_npy(path).data, a.data);
  std::filesystem::remove(path);
  EXPECT_TRUE(says(refusal_of_missing(path), "cannot open"));
}

TEST(Npy, RefusesEachMalformedFile) {
  const std::string ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }";
  EXPECT_TRUE(says(refusal({'n', 'o', 't', ' ', 'n', 'p', 'y', '!', 0, 0}), "not a .npy file"));
  EXPECT_TRUE(says(refusal(file_with(ok, 16, 4)), "unsupported .npy format version 4.0"));
  std::vector<unsigned char> cut = file_with(ok, 16);
  cut.resize(30);
  EXPECT_TRUE(says(refusal(cut), "truncated header"));
  EXPECT_TRUE(says(refusal(file_with("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16)), "Fortran order"));
  EXPECT_TRUE(says(refusal(file_with("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 2), }", 16)), "unsupported dtype '>f4'"));
  EXPECT_TRUE(says(refusal(file_with("{'descr': '<c8', 'fortran_order': False, 'shape': (2, 2), }", 32)), "unsupported dtype '<c8'"));
  EXPECT_TRUE(says(refusal(file_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -2), }", 16)), "corrupt header"));
  EXPECT_TRUE(says(refusal(file_with("{'descr': '<f4', 'fortran_order': False 'shape': (2, 2), }", 16)), "corrupt header"));
  EXPECT_TRUE(says(refusal(file_with("{'descr': '<f4', 'shape': (2, 2), }", 16)), "lacks"));
  EXPECT_TRUE(says(refusal(file_with("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", 0)),
                   "more elements than int64"));
  EXPECT_TRUE(says(refusal(file_with(ok, 15)), "truncated payload (16 bytes expected, 15 present)"));
  EXPECT_TRUE(says(refusal(file_with(ok, 17)), "1 bytes beyond its shape"));
  EXPECT_EQ(refusal(file_with(ok, 16)), "");
}

}  // namespace
}  // namespace pg
