#include "src/harness/npy.hpp"

#include <cctype>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "src/model/invalid_input.hpp"
#include "src/harness/output_file.hpp"
#include "kernels/common/numeric.hpp"

namespace pg {
namespace {

constexpr unsigned char kMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr size_t kPrefix = 8;  // magic + version bytes

struct Descr {
  const char* text;
  NpyType type;
};
// '=' (native) is little-endian on every machine this runs on.
constexpr Descr kDescrs[] = {
    {"<f2", NpyType::f16}, {"=f2", NpyType::f16}, {"|V2", NpyType::bf16}, {"<V2", NpyType::bf16},
    {"<f4", NpyType::f32}, {"=f4", NpyType::f32}, {"<f8", NpyType::f64}, {"=f8", NpyType::f64},
    {"<i4", NpyType::i32}, {"=i4", NpyType::i32}, {"<i8", NpyType::i64}, {"=i8", NpyType::i64},
    {"|u1", NpyType::u8},  {"<u1", NpyType::u8},  {"=u1", NpyType::u8},
};

// The header is a Python dict literal with three keys; this reads exactly that grammar.
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& name) : s_(text), name_(name) {}

  NpyHeader parse() {
    bool have_descr = false, have_order = false, have_shape = false;
    NpyHeader h;
    expect('{');
    while (!peek('}')) {
      const std::string key = quoted();
      expect(':');
      if (key == "descr") {
        h.type = descr(quoted());
        have_descr = true;
      } else if (key == "fortran_order") {
        if (word() != "False") fail("is in Fortran order; only C order is supported");
        have_order = true;
      } else if (key == "shape") {
        h.shape = shape();
        have_shape = true;
      } else {
        fail("header has unknown key '" + key + "'");
      }
      if (!peek('}')) expect(',');
    }
    expect('}');
    skip_space();
    if (pos_ != s_.size()) fail("header has text after the dict");
    if (!have_descr || !have_order || !have_shape)
      fail("header lacks one of 'descr', 'fortran_order', 'shape'");
    int64_t n = 1;
    for (int64_t d : h.shape)
      if (__builtin_mul_overflow(n, d, &n) || __builtin_mul_overflow(n, npy_type_size(h.type), &n))
        fail("shape has more elements than int64 can count");
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const { throw InvalidInput(name_ + ": " + why); }

  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n')) ++pos_;
  }
  bool peek(char c) {
    skip_space();
    return pos_ < s_.size() && s_[pos_] == c;
  }
  void expect(char c) {
    if (!peek(c)) fail(std::string("corrupt header: expected '") + c + "' at offset " + std::to_string(pos_));
    ++pos_;
  }
  std::string quoted() {
    skip_space();
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"'))
      fail("corrupt header: expected a quoted string at offset " + std::to_string(pos_));
    const char q = s_[pos_++];
    const size_t end = s_.find(q, pos_);
    if (end == std::string::npos) fail("corrupt header: unterminated string");
    std::string out = s_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return out;
  }
  std::string word() {
    skip_space();
    const size_t start = pos_;
    while (pos_ < s_.size() && std::isalnum(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    return s_.substr(start, pos_ - start);
  }
  // The text up to the next ',' or ')', spaces trimmed: the whole entry, so that an error
  // quotes "-3" or "3.5" as written.
  std::string shape_entry() {
    skip_space();
    const size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] != ',' && s_[pos_] != ')') ++pos_;
    size_t end = pos_;
    while (end > start && (s_[end - 1] == ' ' || s_[end - 1] == '\n')) --end;
    return s_.substr(start, end - start);
  }
  NpyType descr(const std::string& d) const {
    for (const Descr& k : kDescrs)
      if (d == k.text) return k.type;
    fail("unsupported dtype '" + d +
         "' (supported: <f2 <f4 <f8 <i4 <i8 |u1, and |V2 for bf16; big-endian is not)");
  }
  std::vector<int64_t> shape() {
    std::vector<int64_t> dims;
    expect('(');
    while (!peek(')')) {
      const std::string digits = shape_entry();
      if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos)
        fail("corrupt header: shape entry '" + digits + "' is not a non-negative integer");
      try {
        dims.push_back(std::stoll(digits));
      } catch (const std::out_of_range&) {
        fail("shape entry " + digits + " overflows int64");
      }
      if (!peek(')')) expect(',');
    }
    expect(')');
    return dims;
  }

  const std::string& s_;
  const std::string& name_;
  size_t pos_ = 0;
};

uint32_t read_le(const unsigned char* p, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// The header length field's size for a format version, 0 when the version is unknown.
int length_field(unsigned char major) { return major == 1 ? 2 : (major == 2 || major == 3) ? 4 : 0; }

std::vector<unsigned char> read_file(const std::string& path, size_t limit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InvalidInput(path + ": cannot open for reading");
  std::vector<unsigned char> bytes;
  char buf[65536];
  while (bytes.size() < limit && in) {
    in.read(buf, static_cast<std::streamsize>(std::min(sizeof buf, limit - bytes.size())));
    bytes.insert(bytes.end(), buf, buf + in.gcount());
  }
  return bytes;
}

}  // namespace

const char* npy_type_name(NpyType t) {
  switch (t) {
    case NpyType::f16: return "float16";
    case NpyType::bf16: return "bfloat16";
    case NpyType::f32: return "float32";
    case NpyType::f64: return "float64";
    case NpyType::i32: return "int32";
    case NpyType::i64: return "int64";
    case NpyType::u8: return "uint8";
  }
  return "?";
}

int npy_type_size(NpyType t) {
  switch (t) {
    case NpyType::u8: return 1;
    case NpyType::f16:
    case NpyType::bf16: return 2;
    case NpyType::f32:
    case NpyType::i32: return 4;
    case NpyType::f64:
    case NpyType::i64: return 8;
  }
  return 0;
}

bool npy_type_is_float(NpyType t) {
  return t == NpyType::f16 || t == NpyType::bf16 || t == NpyType::f32 || t == NpyType::f64;
}

DType npy_float_dtype(NpyType t) {
  switch (t) {
    case NpyType::f16: return DType::f16;
    case NpyType::bf16: return DType::bf16;
    case NpyType::f64: return DType::f64;
    default: return DType::f32;
  }
}

NpyType npy_type_of(DType t) {
  switch (t) {
    case DType::f16: return NpyType::f16;
    case DType::bf16: return NpyType::bf16;
    case DType::f32: return NpyType::f32;
    case DType::f64: return NpyType::f64;
  }
  return NpyType::f32;
}

int64_t NpyHeader::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

NpyHeader parse_npy_header(const std::vector<unsigned char>& bytes, const std::string& name,
                           size_t* payload_offset) {
  if (bytes.size() < kPrefix || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    throw InvalidInput(name + ": not a .npy file (no \\x93NUMPY magic)");
  const int field = length_field(bytes[6]);
  if (field == 0)
    throw InvalidInput(name + ": unsupported .npy format version " + std::to_string(bytes[6]) + "." +
                       std::to_string(bytes[7]));
  if (bytes.size() < kPrefix + field) throw InvalidInput(name + ": truncated header");
  const size_t length = read_le(bytes.data() + kPrefix, field);
  const size_t start = kPrefix + field;
  if (bytes.size() < start + length)
    throw InvalidInput(name + ": truncated header (" + std::to_string(length) + " bytes announced, " +
                       std::to_string(bytes.size() - start) + " present)");
  const std::string text(bytes.begin() + static_cast<std::ptrdiff_t>(start),
                         bytes.begin() + static_cast<std::ptrdiff_t>(start + length));
  *payload_offset = start + length;
  return HeaderParser(text, name).parse();
}

NpyArray parse_npy(const std::vector<unsigned char>& bytes, const std::string& name) {
  NpyArray a;
  size_t offset = 0;
  a.header = parse_npy_header(bytes, name, &offset);
  const size_t want = static_cast<size_t>(a.header.elements()) * npy_type_size(a.header.type);
  const size_t have = bytes.size() - offset;
  if (have < want)
    throw InvalidInput(name + ": truncated payload (" + std::to_string(want) + " bytes expected, " +
                       std::to_string(have) + " present)");
  if (have > want)
    throw InvalidInput(name + ": payload has " + std::to_string(have - want) +
                       " bytes beyond its shape (corrupt file)");
  a.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(offset), bytes.end());
  return a;
}

std::vector<unsigned char> format_npy(const NpyArray& a) {
  const char* descr = "";
  for (const Descr& k : kDescrs)
    if (k.type == a.header.type) {
      descr = k.text;
      break;
    }
  std::ostringstream dict;
  dict << "{'descr': '" << descr << "', 'fortran_order': False, 'shape': (";
  for (int64_t d : a.header.shape) dict << d << ", ";
  dict << "), }";
  std::string text = dict.str();
  // Versions 1.0 pads prefix + length field + header + '\n' to a multiple of 64.
  const size_t unpadded = kPrefix + 2 + text.size() + 1;
  text.append((64 - unpadded % 64) % 64, ' ');
  text.push_back('\n');
  std::vector<unsigned char> out(std::begin(kMagic), std::end(kMagic));
  out.push_back(1);
  out.push_back(0);
  out.push_back(static_cast<unsigned char>(text.size() & 0xff));
  out.push_back(static_cast<unsigned char>(text.size() >> 8));
  out.insert(out.end(), text.begin(), text.end());
  out.insert(out.end(), a.data.begin(), a.data.end());
  return out;
}

NpyHeader read_npy_header(const std::string& path) {
  std::vector<unsigned char> prefix = read_file(path, kPrefix + 4);
  size_t length = 0;
  if (prefix.size() >= kPrefix && length_field(prefix[6]) != 0 && prefix.size() >= kPrefix + length_field(prefix[6]))
    length = read_le(prefix.data() + kPrefix, length_field(prefix[6]));
  const std::vector<unsigned char> head = read_file(path, kPrefix + 4 + length);
  size_t offset = 0;
  return parse_npy_header(head, path, &offset);
}

NpyArray read_npy(const std::string& path) {
  return parse_npy(read_file(path, static_cast<size_t>(-1)), path);
}

void write_npy(const std::string& path, const NpyArray& array) {
  write_file_atomically({"file", path}, format_npy(array));
}

}  // namespace pg
