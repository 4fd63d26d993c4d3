#include "ptx/lexer.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "common/error.hpp"

namespace gpusc::ptx {

namespace {

bool identStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%';
}
bool identChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
}

class Lexer {
 public:
  Lexer(std::string_view s, std::shared_ptr<const std::string> file)
      : s_(s), file_(std::move(file)) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    bool sawSpace = true;
    while (true) {
      sawSpace |= skipSpaceAndComments();
      Token t;
      t.line = line_;
      t.col = col();
      t.adjacent = !sawSpace;
      sawSpace = false;
      if (i_ >= s_.size()) {
        t.kind = Tok::End;
        out.push_back(std::move(t));
        return out;
      }
      char c = s_[i_];
      if (c == '.' && i_ + 1 < s_.size() && identChar(s_[i_ + 1])) {
        size_t b = i_++;
        while (i_ < s_.size() && identChar(s_[i_])) ++i_;
        // qualified modifiers such as .shared::cta or .L2::128B
        while (i_ + 2 < s_.size() && s_[i_] == ':' && s_[i_ + 1] == ':' && identChar(s_[i_ + 2])) {
          i_ += 2;
          while (i_ < s_.size() && identChar(s_[i_])) ++i_;
        }
        t.kind = Tok::Directive;
        t.text = std::string(s_.substr(b, i_ - b));
      } else if (c == '_' && (i_ + 1 >= s_.size() || !identChar(s_[i_ + 1]))) {
        ++i_;
        t.kind = Tok::Punct;  // the sink operand "_"
        t.text = "_";
      } else if (c == '%' && (i_ + 1 >= s_.size() || !identChar(s_[i_ + 1]))) {
        ++i_;
        t.kind = Tok::Punct;  // the remainder operator of a constant expression
        t.text = "%";
      } else if (identStart(c)) {
        size_t b = i_++;
        while (i_ < s_.size() && identChar(s_[i_])) ++i_;
        t.kind = Tok::Ident;
        t.text = std::string(s_.substr(b, i_ - b));
      } else if (std::isdigit(static_cast<unsigned char>(c))) {
        number(t);
      } else if (c == '"') {
        size_t b = ++i_;
        while (i_ < s_.size() && s_[i_] != '"' && s_[i_] != '\n') ++i_;
        if (i_ >= s_.size() || s_[i_] != '"') fail(t, "unterminated string");
        t.kind = Tok::String;
        t.text = std::string(s_.substr(b, i_ - b));
        ++i_;
      } else if (std::strchr("{}()[],;:+-!@|<>=*/^~&?", c) != nullptr) {
        t.kind = Tok::Punct;
        t.text = std::string(1, c);
        ++i_;
      } else {
        fail(t, std::string("unexpected character '") + c + "'");
      }
      out.push_back(std::move(t));
    }
  }

 private:
  uint32_t col() const { return static_cast<uint32_t>(i_ - lineStart_ + 1); }

  [[noreturn]] void fail(const Token& t, const std::string& msg) const {
    throw InputError(fmt::format("{}:{}:{}: error: {}", *file_, t.line, t.col, msg));
  }

  bool skipSpaceAndComments() {
    bool any = false;
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == '\n') {
        ++i_;
        ++line_;
        lineStart_ = i_;
        any = true;
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        ++i_;
        any = true;
      } else if (c == '/' && i_ + 1 < s_.size() && s_[i_ + 1] == '/') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
        any = true;
      } else if (c == '/' && i_ + 1 < s_.size() && s_[i_ + 1] == '*') {
        i_ += 2;
        while (i_ + 1 < s_.size() && !(s_[i_] == '*' && s_[i_ + 1] == '/')) {
          if (s_[i_] == '\n') {
            ++line_;
            lineStart_ = i_ + 1;
          }
          ++i_;
        }
        i_ = std::min(s_.size(), i_ + 2);
        any = true;
      } else {
        break;
      }
    }
    return any;
  }

  // The digits `txt` in `base`; more than 64 bits is an error naming the literal.
  uint64_t integer(const Token& t, const std::string& txt, int base) const {
    try {
      return std::stoull(txt, nullptr, base);
    } catch (const std::exception&) {
      fail(t, std::string("integer literal out of range: ") +
                  (base == 16  ? "0x"
                   : base == 2 ? "0b"
                               : "") +
                  txt);
    }
  }

  void number(Token& t) {
    size_t b = i_;
    auto hexDigits = [&](size_t from) {
      size_t j = from;
      while (j < s_.size() && std::isxdigit(static_cast<unsigned char>(s_[j]))) ++j;
      return j;
    };
    if (s_[i_] == '0' && i_ + 1 < s_.size() &&
        (s_[i_ + 1] == 'f' || s_[i_ + 1] == 'F' || s_[i_ + 1] == 'd' || s_[i_ + 1] == 'D')) {
      bool single = s_[i_ + 1] == 'f' || s_[i_ + 1] == 'F';
      size_t e = hexDigits(i_ + 2);
      size_t want = single ? 8 : 16;
      if (e - (i_ + 2) != want)
        fail(t, fmt::format("{} floating-point literal needs {} hex digits",
                            single ? "single-precision" : "double-precision", want));
      uint64_t bits = std::stoull(std::string(s_.substr(i_ + 2, want)), nullptr, 16);
      t.kind = Tok::Float;
      t.fbits = single ? 32 : 64;
      t.ival = bits;
      if (single) {
        uint32_t b32 = static_cast<uint32_t>(bits);
        float f;
        std::memcpy(&f, &b32, 4);
        t.fval = f;
      } else {
        std::memcpy(&t.fval, &bits, 8);
      }
      i_ = e;
    } else if (s_[i_] == '0' && i_ + 1 < s_.size() && (s_[i_ + 1] == 'x' || s_[i_ + 1] == 'X')) {
      size_t e = hexDigits(i_ + 2);
      if (e == i_ + 2) fail(t, "hexadecimal literal without digits");
      t.kind = Tok::Int;
      t.ival = integer(t, std::string(s_.substr(i_ + 2, e - i_ - 2)), 16);
      i_ = e;
    } else if (s_[i_] == '0' && i_ + 1 < s_.size() && (s_[i_ + 1] == 'b' || s_[i_ + 1] == 'B')) {
      size_t e = i_ + 2;
      while (e < s_.size() && (s_[e] == '0' || s_[e] == '1')) ++e;
      if (e == i_ + 2) fail(t, "binary literal without digits");
      t.kind = Tok::Int;
      t.ival = integer(t, std::string(s_.substr(i_ + 2, e - i_ - 2)), 2);
      i_ = e;
    } else {
      size_t e = i_;
      while (e < s_.size() && std::isdigit(static_cast<unsigned char>(s_[e]))) ++e;
      bool isFloat = false;
      if (e < s_.size() && s_[e] == '.' && e + 1 < s_.size() &&
          std::isdigit(static_cast<unsigned char>(s_[e + 1]))) {
        isFloat = true;
        ++e;
        while (e < s_.size() && std::isdigit(static_cast<unsigned char>(s_[e]))) ++e;
      }
      if (e < s_.size() && (s_[e] == 'e' || s_[e] == 'E')) {
        size_t k = e + 1;
        if (k < s_.size() && (s_[k] == '+' || s_[k] == '-')) ++k;
        if (k < s_.size() && std::isdigit(static_cast<unsigned char>(s_[k]))) {
          isFloat = true;
          e = k;
          while (e < s_.size() && std::isdigit(static_cast<unsigned char>(s_[e]))) ++e;
        }
      }
      std::string txt(s_.substr(i_, e - i_));
      if (isFloat) {
        t.kind = Tok::Float;
        t.fbits = 64;
        errno = 0;
        t.fval = std::strtod(txt.c_str(), nullptr);  // underflow gives a denormal or zero
        if (errno == ERANGE && std::isinf(t.fval))
          fail(t, "floating-point literal out of range: " + txt);
        std::memcpy(&t.ival, &t.fval, 8);
      } else {
        t.kind = Tok::Int;
        bool octal = txt.size() > 1 && txt[0] == '0';
        t.ival = integer(t, txt, octal ? 8 : 10);
      }
      i_ = e;
    }
    if (i_ < s_.size() && (s_[i_] == 'U' || s_[i_] == 'u') && t.kind == Tok::Int) ++i_;
    if (i_ < s_.size() && identChar(s_[i_]))
      fail(t, "malformed number '" + std::string(s_.substr(b, i_ - b + 1)) + "'");
    t.text = std::string(s_.substr(b, i_ - b));
  }

  std::string_view s_;
  std::shared_ptr<const std::string> file_;
  size_t i_ = 0;
  size_t lineStart_ = 0;
  uint32_t line_ = 1;
};

}  // namespace

std::vector<Token> tokenize(std::string_view text, const std::shared_ptr<const std::string>& file) {
  return Lexer(text, file).run();
}

}  // namespace gpusc::ptx
