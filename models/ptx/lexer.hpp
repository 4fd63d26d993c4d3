// PTX tokens. Opcodes and their modifiers arrive as separate tokens ("ld" ".global" ".u32");
// `adjacent` tells the parser that no whitespace separated a token from the previous one.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ptx/source.hpp"

namespace gpusc::ptx {

enum class Tok : uint8_t {
  End,
  Ident,      // foo, %r1, $L__BB0_2, _Z3fooPf
  Directive,  // .reg .u32 .global  (text includes the dot)
  Int,        // 42, 0x2A, 42U   (value in `ival`)
  Float,      // 0f3F800000, 0d3FF0..., 1.5  (value in `fval`, `fbits` 32 or 64)
  String,     // "..."
  Punct,      // one of { } ( ) [ ] , ; : + - ! @ | < > = _ * / ^ ~ & ? % (% alone)
};

struct Token {
  Tok kind = Tok::End;
  std::string text;
  uint64_t ival = 0;
  double fval = 0;
  uint8_t fbits = 0;      // 32 for 0f literals, 64 for 0d and decimal literals
  bool adjacent = false;  // no whitespace before this token
  uint32_t line = 0, col = 0;

  bool is(Tok k, std::string_view t) const { return kind == k && text == t; }
  bool punct(char c) const { return kind == Tok::Punct && text.size() == 1 && text[0] == c; }
};

// Tokenises a whole PTX file. Throws InputError "FILE:LINE:COL: ..." on a malformed token.
std::vector<Token> tokenize(std::string_view text, const std::shared_ptr<const std::string>& file);

}  // namespace gpusc::ptx
