// NumPy .npy files (format versions 1.0, 2.0 and 3.0), C order, little-endian.
//
// Element types: f16 '<f2', f32 '<f4', f64 '<f8', int32 '<i4', int64 '<i8', uint8 '|u1', and
// bf16 as '|V2' (2-byte raw elements holding the upper half of an IEEE f32), which is what
// np.save writes for an ml_dtypes.bfloat16 array; '<V2' is read as bf16 too. Anything else is
// refused with a message naming the file and the descr.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/common/numeric.hpp"

namespace pg {

enum class NpyType : uint8_t { f16, bf16, f32, f64, i32, i64, u8 };

const char* npy_type_name(NpyType t);
int npy_type_size(NpyType t);
bool npy_type_is_float(NpyType t);
DType npy_float_dtype(NpyType t);  // only for float types
NpyType npy_type_of(DType t);

struct NpyHeader {
  NpyType type = NpyType::f32;
  std::vector<int64_t> shape;
  int64_t elements() const;  // validated not to overflow when parsed
};

struct NpyArray {
  NpyHeader header;
  std::vector<unsigned char> data;  // elements() * npy_type_size(type) bytes, C order
};

// Parsers throw InvalidInput with one line starting with `name` (usually the file's path):
// bad magic, unsupported version, truncated or corrupt header, Fortran order, unsupported
// dtype, shape overflow, truncated payload or trailing bytes.
NpyHeader parse_npy_header(const std::vector<unsigned char>& bytes, const std::string& name,
                           size_t* payload_offset);
NpyArray parse_npy(const std::vector<unsigned char>& bytes, const std::string& name);
std::vector<unsigned char> format_npy(const NpyArray& array);

// Files. read_npy_header reads only the header, so a problem can be validated before the
// payload is allocated.
NpyHeader read_npy_header(const std::string& path);
NpyArray read_npy(const std::string& path);
// Written atomically (src/harness/output_file.hpp); throws InvalidInput.
void write_npy(const std::string& path, const NpyArray& array);

}  // namespace pg
