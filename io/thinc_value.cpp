// Parses and writes Thinc config values: JSON as Thinc's ujson reads it, and the spelling that reads back.
#include "io/thinc_value.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "io/toml_text.hpp"

namespace psgrad {

namespace {

// ujson gives up on deeper nesting too; the limit keeps a hostile config from exhausting the stack.
constexpr int kMaxNesting = 512;

// A recursive-descent reader; nothing (std::nullopt) as soon as the text is not JSON.
class JsonParser {
 public:
  explicit JsonParser(std::string_view text) : text_(text) {}

  std::optional<ThincValue> document() {
    auto value = parse_value(0);
    skip_space();
    if (!value || at_ != text_.size()) return std::nullopt;
    return value;
  }
  const std::optional<std::string>& range_problem() const { return range_problem_; }

 private:
  void skip_space() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\n' || text_[at_] == '\r'))
      ++at_;
  }
  char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }
  std::optional<ThincValue> word(std::string_view spelling, ThincValue value) {
    if (text_.substr(at_, spelling.size()) != spelling) return std::nullopt;
    at_ += spelling.size();
    return value;
  }

  std::optional<ThincValue> parse_value(int depth) {
    if (depth > kMaxNesting) return std::nullopt;
    skip_space();
    switch (peek()) {
      case '{': return parse_object(depth);
      case '[': return parse_array(depth);
      case '"': {
        auto text = parse_string();
        if (!text) return std::nullopt;
        return ThincValue{std::move(*text)};
      }
      case 't': return word("true", ThincValue{true});
      case 'f': return word("false", ThincValue{false});
      case 'n': return word("null", ThincValue{});
      default: return parse_number();
    }
  }

  std::optional<ThincValue> parse_array(int depth) {
    ++at_;  // '['
    ThincList list;
    skip_space();
    if (peek() == ']') {
      ++at_;
      return ThincValue{std::move(list)};
    }
    while (true) {
      auto element = parse_value(depth + 1);
      if (!element) return std::nullopt;
      list.push_back(std::move(*element));
      skip_space();
      const char next = peek();
      ++at_;
      if (next == ']') return ThincValue{std::move(list)};
      if (next != ',') return std::nullopt;
    }
  }

  std::optional<ThincValue> parse_object(int depth) {
    ++at_;  // '{'
    ThincTable table;
    skip_space();
    if (peek() == '}') {
      ++at_;
      return ThincValue{std::move(table)};
    }
    while (true) {
      skip_space();
      if (peek() != '"') return std::nullopt;
      auto key = parse_string();
      skip_space();
      if (!key || peek() != ':') return std::nullopt;
      ++at_;
      auto value = parse_value(depth + 1);
      if (!value) return std::nullopt;
      table.set(*key, std::move(*value));  // a repeated key: the last one wins, as in Python
      skip_space();
      const char next = peek();
      ++at_;
      if (next == '}') return ThincValue{std::move(table)};
      if (next != ',') return std::nullopt;
    }
  }

  static void append_utf8(std::string& out, std::uint32_t code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  std::optional<std::uint32_t> hex4() {
    if (at_ + 4 > text_.size()) return std::nullopt;
    std::uint32_t code = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[at_++];
      code <<= 4;
      if (c >= '0' && c <= '9') code |= static_cast<std::uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f') code |= static_cast<std::uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') code |= static_cast<std::uint32_t>(c - 'A' + 10);
      else return std::nullopt;
    }
    return code;
  }

  // Raw control characters pass, as ujson lets them.
  std::optional<std::string> parse_string() {
    ++at_;  // '"'
    std::string out;
    while (at_ < text_.size()) {
      const char c = text_[at_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      switch (peek()) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          ++at_;
          auto code = hex4();
          if (!code) return std::nullopt;
          if (*code >= 0xD800 && *code < 0xDC00 && text_.substr(at_, 2) == "\\u") {
            const auto high = *code;
            at_ += 2;
            const auto low = hex4();
            if (!low) return std::nullopt;
            if (*low >= 0xDC00 && *low < 0xE000) code = 0x10000 + ((high - 0xD800) << 10) + (*low - 0xDC00);
            else at_ -= 6;  // not a pair: the next escape stands alone
          }
          if (*code >= 0xD800 && *code < 0xE000) code = 0xFFFD;  // a lone surrogate has no UTF-8 spelling
          append_utf8(out, *code);
          continue;
        }
        default: return std::nullopt;  // also the end of the text
      }
      ++at_;
    }
    return std::nullopt;
  }

  // ujson's numbers: "-" then digits (leading zeros allowed), "." and digits (none is fine: "5."), an
  // exponent whose digits may be missing ("1e" is 1.0). No fraction or exponent: an integer.
  std::optional<ThincValue> parse_number() {
    const auto start = at_;
    const bool negative = peek() == '-';
    if (negative) ++at_;
    const auto digits_start = at_;
    while (std::isdigit(static_cast<unsigned char>(peek()))) ++at_;
    const bool integer_digits = at_ > digits_start;
    if (!negative && !integer_digits) return std::nullopt;
    bool is_float = false;
    std::size_t fraction_digits = 0;
    if (peek() == '.') {
      is_float = true;
      ++at_;
      const auto fraction_start = at_;
      while (std::isdigit(static_cast<unsigned char>(peek()))) ++at_;
      fraction_digits = at_ - fraction_start;
    }
    if (!integer_digits && fraction_digits == 0) return std::nullopt;
    std::string number(text_.substr(start, at_ - start));
    if (peek() == 'e' || peek() == 'E') {
      is_float = true;
      ++at_;
      std::string exponent = "e";
      if (peek() == '+' || peek() == '-') exponent += text_[at_++];
      const auto exponent_start = at_;
      while (std::isdigit(static_cast<unsigned char>(peek()))) ++at_;
      if (at_ > exponent_start) number += exponent + std::string(text_.substr(exponent_start, at_ - exponent_start));
    }
    if (is_float) {
      if (number.back() == '.') number.pop_back();  // strtod reads "5." too, but "-." would be nothing
      return ThincValue{std::strtod(number.c_str(), nullptr)};  // out of range: +-inf or 0, as ujson
    }
    errno = 0;
    const auto value = std::strtoll(number.c_str(), nullptr, 10);
    if (errno != ERANGE) return ThincValue{static_cast<std::int64_t>(value)};
    // ujson takes integers up to 2^64 - 1; beyond that, and below -2^63, the text is not JSON to it.
    errno = 0;
    std::strtoull(number.c_str() + (negative ? 1 : 0), nullptr, 10);
    if (negative || errno == ERANGE) return std::nullopt;
    range_problem_ = fmt::format("integer {} is out of range: at most {}", number,
                                 std::numeric_limits<std::int64_t>::max());
    return ThincValue{std::int64_t{0}};
  }

  std::string_view text_;
  std::size_t at_ = 0;
  std::optional<std::string> range_problem_;
};

// A JSON string escapes as a TOML basic string does (TOML took its escapes from JSON).
std::string json_string(const std::string& text) { return toml_string(text); }

// Whether Thinc would read this text as something other than the string itself.
bool reads_as_json(const std::string& text) {
  auto parsed = parse_thinc_json(text);
  return !parsed || parsed->has_value();
}

std::string doubled_dollars(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '$' ? std::string("$$") : std::string(1, c);
  return out;
}

// json: plain JSON for other programs. The others are how a Thinc config spells a value:
// thinc_plain where Thinc reads it once (inside an object), thinc_in_list where Thinc reads a list's
// strings once more as JSON ("1" in a list would come back as 1).
enum class Spelling { json, thinc_plain, thinc_in_list };

std::string spelled_number(double x, Spelling spelling) {
  if (std::isnan(x)) return "NaN";
  // ujson reads no Infinity, but an overflowing exponent as one.
  if (std::isinf(x) && spelling == Spelling::json) return x > 0 ? "Infinity" : "-Infinity";
  if (std::isinf(x)) return x > 0 ? "1e999" : "-1e999";
  return toml_number(x);
}

std::string spelled(const ThincValue& value, Spelling spelling) {
  return std::visit(
      [&](const auto& held) -> std::string {
        using T = std::decay_t<decltype(held)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return "null";
        } else if constexpr (std::is_same_v<T, bool>) {
          return held ? "true" : "false";
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          return std::to_string(held);
        } else if constexpr (std::is_same_v<T, double>) {
          return spelled_number(held, spelling);
        } else if constexpr (std::is_same_v<T, std::string>) {
          if (spelling == Spelling::thinc_in_list && reads_as_json(held)) return json_string(json_string(held));
          return json_string(held);
        } else if constexpr (std::is_same_v<T, ThincList>) {
          std::string out = "[";  // nested lists are read as their list is
          for (std::size_t i = 0; i < held.size(); ++i) out += (i ? ", " : "") + spelled(held[i], spelling);
          return out + "]";
        } else {
          const auto inner = spelling == Spelling::json ? Spelling::json : Spelling::thinc_plain;
          std::string out = "{";
          for (const auto& [key, entry] : held.entries())
            out += (out.size() > 1 ? ", " : "") + json_string(key) + ": " + spelled(entry, inner);
          return out + "}";
        }
      },
      value.data);
}

}  // namespace

ThincValue* ThincTable::find(const std::string& key) {
  const auto it = index_.find(key);
  return it == index_.end() ? nullptr : &entries_[it->second].second;
}

const ThincValue* ThincTable::find(const std::string& key) const {
  const auto it = index_.find(key);
  return it == index_.end() ? nullptr : &entries_[it->second].second;
}

ThincValue& ThincTable::set(const std::string& key, ThincValue value) {
  if (auto* existing = find(key)) return *existing = std::move(value);
  index_.emplace(key, entries_.size());
  entries_.emplace_back(key, std::move(value));
  return entries_.back().second;
}

void ThincTable::erase(const std::string& key) {
  const auto it = index_.find(key);
  if (it == index_.end()) return;
  entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(it->second));
  index_.clear();
  for (std::size_t i = 0; i < entries_.size(); ++i) index_.emplace(entries_[i].first, i);
}

Result<std::optional<ThincValue>> parse_thinc_json(std::string_view text) {
  JsonParser parser(text);
  auto value = parser.document();
  if (value && parser.range_problem()) return Error{*parser.range_problem()};
  return value;
}

std::string json_text(const ThincValue& value) { return spelled(value, Spelling::json); }

std::string thinc_text(const ThincValue& value) {
  // A string is unquoted once on reading, then read as JSON after ${...} are filled in: one that would
  // read as JSON keeps a second pair of quotes.
  if (const auto* text = value.text())
    return json_string(doubled_dollars(reads_as_json(*text) ? json_string(*text) : *text));
  // Lists are read again element by element; a number or boolean is the same in any spelling.
  return doubled_dollars(spelled(value, Spelling::thinc_in_list));
}

ThincValue to_thinc_value(const SettingValue& value) {
  ThincValue out;
  if (const auto* flag = std::get_if<bool>(&value)) out.data = *flag;
  else if (const auto* integer = std::get_if<std::int64_t>(&value)) out.data = *integer;
  else if (const auto* number = std::get_if<double>(&value)) out.data = *number;
  else if (const auto* text = std::get_if<std::string>(&value)) out.data = *text;
  else if (const auto* integers = std::get_if<std::vector<std::int64_t>>(&value)) {
    ThincList list;
    for (const auto x : *integers) list.emplace_back().data = x;
    out.data = std::move(list);
  }
  return out;
}

}  // namespace psgrad
