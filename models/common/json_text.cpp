#include "common/json_text.hpp"

#include <array>
#include <charconv>
#include <cmath>

#include "common/error.hpp"

namespace gpusc {
namespace {

class JsonText {
 public:
  JsonText(std::string& out, int step) : out_(out), step_(step) {}

  void value(const nlohmann::json& j, unsigned indent) {
    using T = nlohmann::json::value_t;
    switch (j.type()) {
      case T::object:
        container(j.get_ref<const nlohmann::json::object_t&>(), '{', '}', indent,
                  [&](const auto& member, unsigned inner) {
                    string(member.first);
                    out_ += step_ >= 0 ? "\": " : "\":";
                    value(member.second, inner);
                  });
        return;
      case T::array:
        container(j.get_ref<const nlohmann::json::array_t&>(), '[', ']', indent,
                  [&](const nlohmann::json& v, unsigned inner) { value(v, inner); });
        return;
      case T::string:
        string(j.get_ref<const std::string&>());
        out_ += '"';
        return;
      case T::boolean:
        out_ += j.get<bool>() ? "true" : "false";
        return;
      case T::number_integer:
        integer(j.get<int64_t>());
        return;
      case T::number_unsigned:
        integer(j.get<uint64_t>());
        return;
      case T::number_float:
        number(j.get<double>());
        return;
      case T::null:
        out_ += "null";
        return;
      case T::discarded:
        out_ += "<discarded>";
        return;
      case T::binary:
        break;
    }
    throw InternalError("appendJson: binary values have no JSON text");
  }

 private:
  // An object or array: its items one per line, `item` writing each at depth `inner`.
  template <typename Items, typename Item>
  void container(const Items& items, char open, char close, unsigned indent, Item&& item) {
    out_ += open;
    if (items.empty()) {
      out_ += close;
      return;
    }
    const unsigned inner = indent + unsigned(step_);
    bool first = true;
    for (const auto& x : items) {
      if (!first) out_ += ',';
      first = false;
      newline(inner);
      item(x, inner);
    }
    newline(indent);
    out_ += close;
  }
  // A line break and the indentation of the next line (nothing in the compact form).
  void newline(unsigned indent) {
    if (step_ < 0) return;
    out_ += '\n';
    out_.append(indent, ' ');
  }
  // The opening quote and the escaped text; the caller closes it (a key goes on with '": ').
  void string(const std::string& s) {
    for (const char c : s) {
      const auto u = static_cast<unsigned char>(c);
      if (u < 0x20 || u >= 0x7f || c == '"' || c == '\\') {
        // Escapes, and multi-byte UTF-8 (which the library validates): its own text.
        const std::string text = nlohmann::json(s).dump();
        out_.append(text, 0, text.size() - 1);
        return;
      }
    }
    out_ += '"';
    out_ += s;
  }
  template <typename I>
  void integer(I v) {
    std::array<char, 24> buf;
    const auto r = std::to_chars(buf.data(), buf.data() + buf.size(), v);
    out_.append(buf.data(), size_t(r.ptr - buf.data()));
  }
  void number(double v) {
    if (!std::isfinite(v)) {
      out_ += "null";
      return;
    }
    std::array<char, 64> buf;
    const char* end = nlohmann::detail::to_chars(buf.data(), buf.data() + buf.size(), v);
    out_.append(buf.data(), size_t(end - buf.data()));
  }

  std::string& out_;
  const int step_;
};

}  // namespace

void appendJson(std::string& out, const nlohmann::json& j, int indentStep, unsigned currentIndent) {
  JsonText(out, indentStep).value(j, currentIndent);
}

}  // namespace gpusc
