// Visitors over the Configurable description: YAML loading with overrides (the output visitors,
// YAML/JSON and the Markdown reference, are in config_output.cpp).
#include "models/config/config.h"
#include "models/config/config_text.h"
#include "models/config/yaml_text.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cfloat>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

namespace fabricsim::config {

using namespace detail;  // value text and ranges (config_text.h)

void Checker::fail(const std::string& dotted_key, const std::string& message) const {
  const std::string key = full(dotted_key);
  throw ConfigError(where_(key) + ": " + key + ": " + message);
}

namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string element_key(const std::string& list, long index);

// Closest candidate within edit distance 2 (first one wins ties), or "".
std::string closest(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = 3;
  for (const auto& c : candidates) {
    const size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

std::string describe(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return "'" + n.Scalar() + "'";
    default:
      return "no value";
  }
}

// `shown` is the value as the user wrote it ("1000B", not its canonical "1KB").
template <class T>
bool check_range(T v, T min, T max, const std::string& shown, std::string& err) {
  if (!(magnitude(v) < magnitude(min)) && !(magnitude(max) < magnitude(v))) return true;
  const bool bounded = has_min(min) && has_max(max);
  err = shown + " is out of range " + (bounded ? "" : "(must be ") + range_text(min, max) +
        (bounded ? "" : ")");
  return false;
}

// ---- scalar parsing ----------------------------------------------------------------------------

// The byte offset of the first byte of `s` that is not well-formed UTF-8 (RFC 3629: no overlong
// forms, no surrogates, nothing past U+10FFFF), or npos. A configuration is text: a string value
// in another encoding would load, then make every JSON writer of the results throw (found by
// fuzz_config: a trace file name with byte 0x9b).
size_t bad_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    size_t n = 0;                        // continuation bytes
    unsigned char lo = 0x80, hi = 0xbf;  // the range of the first continuation byte
    if (b < 0x80) {
      ++i;
      continue;
    } else if (b >= 0xc2 && b <= 0xdf) {
      n = 1;
    } else if (b >= 0xe0 && b <= 0xef) {
      n = 2;
      if (b == 0xe0) lo = 0xa0;  // overlong
      if (b == 0xed) hi = 0x9f;  // surrogates
    } else if (b >= 0xf0 && b <= 0xf4) {
      n = 3;
      if (b == 0xf0) lo = 0x90;  // overlong
      if (b == 0xf4) hi = 0x8f;  // past U+10FFFF
    } else {
      return i;
    }
    if (n >= s.size() - i) return i;  // cut short by the end
    for (size_t k = 1; k <= n; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if (c < (k == 1 ? lo : 0x80) || c > (k == 1 ? hi : 0xbf)) return i;
    }
    i += n + 1;
  }
  return std::string::npos;
}

bool need_scalar(const YAML::Node& n, const std::string& expected, std::string& err) {
  if (n.IsScalar()) return true;
  err = "expected " + expected + ", got " + describe(n);
  return false;
}

// Numbers and booleans must be plain: a quoted "5" is a string in YAML, and so is `!!str 5`.
// A plain scalar's tag is "?" (to be resolved), a quoted one's "!"; an explicit tag is accepted
// only when it is a YAML core tag of the type expected (`!!int 5`; `!!int` or `!!float` for a
// number).
bool need_plain(const YAML::Node& n, const std::string& expected,
                std::initializer_list<const char*> core_tags, std::string& err) {
  if (!need_scalar(n, expected, err)) return false;
  const std::string& tag = n.Tag();
  const std::string core = "tag:yaml.org,2002:";
  if (tag == "?") return true;
  for (const char* t : core_tags)
    if (tag == core + t) return true;
  if (tag == "!")
    err = "expected " + expected + ", got the quoted string \"" + n.Scalar() + "\"";
  else
    err = "expected " + expected + ", got '" + n.Scalar() + "' tagged " +
          (tag.rfind(core, 0) == 0 ? "!!" + tag.substr(core.size()) : tag);
  return false;
}

// std::from_chars rather than yaml-cpp's decoder: that one reads "010" as octal 8 and "0x10" as 16,
// which other YAML tools disagree on. Decimal only, no leading zeros.
bool parse_int(const YAML::Node& n, int64_t& v, std::string& err) {
  if (!need_plain(n, "an integer", {"int"}, err)) return false;
  const std::string& s = n.Scalar();
  const char* end = s.data() + s.size();
  const auto r = std::from_chars(s.data(), end, v);
  if (r.ec == std::errc::result_out_of_range) {
    err = s + " does not fit in a 64-bit integer";
    return false;
  }
  const size_t digits = s.size() - (s.rfind('-', 0) == 0 ? 1 : 0);
  if (r.ec != std::errc() || r.ptr != end || (digits > 1 && s[s.size() - digits] == '0')) {
    err = "expected an integer, got '" + s + "'";
    return false;
  }
  return true;
}

bool parse_double(const YAML::Node& n, double& v, std::string& err) {
  if (!need_plain(n, "a number", {"float", "int"}, err)) return false;
  const std::string& s = n.Scalar();
  const char* end = s.data() + s.size();
  const auto r = std::from_chars(s.data(), end, v);
  if (r.ec != std::errc() || r.ptr != end || !std::isfinite(v)) {
    err = "expected a finite number, got '" + s + "'";
    return false;
  }
  return true;
}

// YAML 1.2 core booleans only: "yes"/"on"/"y" are YAML 1.1 and a classic source of surprises.
bool parse_bool(const YAML::Node& n, bool& v, std::string& err) {
  if (!need_plain(n, "true or false", {"bool"}, err)) return false;
  const std::string& s = n.Scalar();
  if (s == "true" || s == "True" || s == "TRUE") {
    v = true;
  } else if (s == "false" || s == "False" || s == "FALSE") {
    v = false;
  } else {
    err = "expected true or false, got '" + s + "'";
    return false;
  }
  return true;
}

template <class T>
bool parse_unit(const YAML::Node& n, T& v, const std::string& expected,
                bool (*parse)(const std::string&, T&, std::string&), std::string& err) {
  return need_scalar(n, expected, err) && parse(n.Scalar(), v, err);
}
bool parse_value(const YAML::Node& n, Time& v, std::string& err) {
  return parse_unit(n, v, "a time such as 500ns", parse_time, err);
}
bool parse_value(const YAML::Node& n, Bytes& v, std::string& err) {
  return parse_unit(n, v, "a size such as 64KiB", parse_bytes, err);
}
bool parse_value(const YAML::Node& n, BitRate& v, std::string& err) {
  return parse_unit(n, v, "a bit rate such as 800Gbps", parse_bitrate, err);
}
bool parse_value(const YAML::Node& n, Frequency& v, std::string& err) {
  return parse_unit(n, v, "a frequency such as 1.35GHz", parse_frequency, err);
}
bool parse_value(const YAML::Node& n, int64_t& v, std::string& err) {
  return parse_int(n, v, err);
}
bool parse_value(const YAML::Node& n, double& v, std::string& err) {
  return parse_double(n, v, err);
}

// ---- loading ------------------------------------------------------------------------------------

struct Entry {
  YAML::Node key;
  YAML::Node value;
};

// First entry named `name` in a mapping (duplicates are reported separately).
std::optional<Entry> find_entry(const YAML::Node& map, const std::string& name) {
  if (!map.IsMap()) return std::nullopt;
  for (const auto& kv : map) {  // yaml-cpp's operator-> yields a temporary: iterate by value
    if (kv.first.IsScalar() && kv.first.Scalar() == name) return Entry{kv.first, kv.second};
  }
  return std::nullopt;
}

// Everything known about one load: the merged tree, where its parts came from, and which keys the
// description consumed.
struct LoadState {
  std::string file;  // as given, for messages; "" when loading defaults only
  YAML::Node root;
  std::map<std::string, std::string> override_origin;  // dotted key -> "--set KEY=VALUE"
  std::map<std::string, std::string> origin;           // every consumed key -> its location
  std::set<std::string> consumed_sections;
  std::set<std::string> consumed_lists;  // lists of sections
  std::set<std::string> consumed_params;
  std::set<std::string> variant;  // params the file states in a `!variant` section
  std::map<std::string, std::string> element_origin;         // "list[i]" -> where the element is
  std::set<std::string> known;                               // every key of the description
  std::map<std::string, std::vector<std::string>> children;  // section -> its key names
  size_t max_depth = 0;  // parts of the description's deepest key ("a.b[1].c": 3)

  // Keys set by an override, or lying inside a subtree an override set, name that override.
  std::string where(const std::string& dotted, const YAML::Node& key) const {
    for (std::string k = dotted;;) {
      const auto it = override_origin.find(k);
      if (it != override_origin.end()) return it->second;
      const size_t cut = k.find_last_of(".[");  // "a.b[1].c" -> "a.b[1]" -> "a.b" -> "a"
      if (cut == std::string::npos) break;
      k.resize(cut);
    }
    return file + ":" + std::to_string(key.Mark().line + 1);
  }
};

// Text shown in a message for something the user gave, which may be huge (a 49 KB --set, a key of
// 20,000 parts): repeated on every line that names it, so its head only.
std::string shorten(const std::string& s) {
  constexpr size_t kShown = 256;
  if (s.size() <= kShown) return s;
  return s.substr(0, kShown) + fmt::format("... ({} characters)", s.size());
}

// The tag of a section whose keys the file states for configurations made from it (load()).
constexpr const char* kVariantTag = "!variant";

constexpr const char* kCommaAfterValue =
    "after a complete value (a ',' separates the items of a [ ] or { } list only)";

// The parts of the description's deepest key: a dotted --set key with more cannot name a key, and
// is refused before the tree is built for it (a key of 20,000 parts would take quadratic time).
class DepthVisitor final : public Visitor {
 public:
  size_t max_depth = 0;
  void begin_section(const std::string&, const std::string&) override {
    ++depth_;
    max_depth = std::max(max_depth, depth_);
  }
  void end_section() override { --depth_; }
  void param(const std::string&, int64_t&, int64_t, int64_t, int64_t, const std::string&,
             const std::string&) override {
    leaf();
  }
  void param(const std::string&, double&, double, double, double, const std::string&,
             const std::string&) override {
    leaf();
  }
  void param(const std::string&, bool&, bool, const std::string&) override { leaf(); }
  void param(const std::string&, Time&, Time, Time, Time, const std::string&) override { leaf(); }
  void param(const std::string&, Bytes&, Bytes, Bytes, Bytes, const std::string&) override {
    leaf();
  }
  void param(const std::string&, BitRate&, BitRate, BitRate, BitRate, const std::string&) override {
    leaf();
  }
  void param(const std::string&, Frequency&, Frequency, Frequency, Frequency,
             const std::string&) override {
    leaf();
  }
  void param(const std::string&, std::string&, const std::string&, const std::string&) override {
    leaf();
  }
  void choice(const std::string&, std::string&, const std::string&, const std::vector<std::string>&,
              const std::string&) override {
    leaf();
  }
  void list(const std::string&, std::vector<double>&, const std::vector<double>&, double, double,
            const std::string&, const std::string&) override {
    leaf();
  }
  void section_list(const std::string&, SectionList& list, const std::string&) override {
    ++depth_;  // "name[i]" is one part
    max_depth = std::max(max_depth, depth_);
    list.prototype()->visit(*this);
    --depth_;
  }

 private:
  void leaf() { max_depth = std::max(max_depth, depth_ + 1); }
  size_t depth_ = 0;
};

// One step of a dotted key: a name, and for "name[i]" (an element of a list of sections) its index.
struct KeyPart {
  std::string name;
  long index = -1;  // -1: not an element
};

// Splits "a.b[1].c" into its parts; false if a part is empty, holds white space, or has brackets
// other than one trailing "[N]" (N decimal).
bool split_key(const std::string& key, std::vector<KeyPart>& parts) {
  parts.clear();
  if (key.empty() || key.back() == '.') return false;
  std::stringstream ss(key);
  for (std::string p; std::getline(ss, p, '.');) {
    KeyPart part;
    const size_t open = p.find('[');
    if (open != std::string::npos) {
      const std::string digits = p.substr(open + 1, p.size() - open - 2);
      if (p.back() != ']' || digits.empty() || digits.size() > 9 ||
          !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return false;
      part.index = std::stol(digits);
      p.resize(open);
    }
    if (p.empty() || p.find_first_of("[] \t\n\r\f\v") != std::string::npos) return false;
    part.name = p;
    parts.push_back(part);
  }
  return true;
}

std::string element_key(const std::string& list, long index) {
  return list + "[" + std::to_string(index) + "]";
}

// Sets `key` (dotted) to `node` in the tree, creating sections on the way. A mapping is merged key
// by key, so that "--set sim={duration: 2us}" changes the duration and keeps the file's other
// sim keys, as "--set sim.duration=2us" would.
void set_path(LoadState& st, const std::string& key, const YAML::Node& node,
              const std::string& label) {
  if (node.IsMap()) {
    for (const auto& kv : node) {
      const std::string k = kv.first.IsScalar() ? kv.first.Scalar() : "";
      if (k.empty() || k.find_first_of(". \t") != std::string::npos)
        throw ConfigError(label + ": malformed key '" + shorten(key + "." + k) + "'");
      set_path(st, key + "." + k, kv.second, label);
    }
    return;
  }
  const size_t depth = static_cast<size_t>(std::count(key.begin(), key.end(), '.')) + 1;
  if (depth > st.max_depth)
    throw ConfigError(label + ": unknown key '" + shorten(key) + "': " + std::to_string(depth) +
                      " parts, and no key is nested deeper than " + std::to_string(st.max_depth));
  std::vector<KeyPart> parts;
  if (!split_key(key, parts)) throw ConfigError(label + ": malformed key '" + shorten(key) + "'");
  // Node handles alias the tree, so rebind with reset() (plain assignment would overwrite).
  YAML::Node cur;
  cur.reset(st.root);
  std::string path;
  for (size_t i = 0; i < parts.size(); ++i) {
    const KeyPart& part = parts[i];
    const bool last = i + 1 == parts.size();
    path = join_key(path, part.name);
    auto e = find_entry(cur, part.name);
    if (part.index < 0) {
      if (last) break;
      if (!e || e->value.IsNull()) {
        cur[part.name] = YAML::Node(YAML::NodeType::Map);
        st.override_origin.emplace(path, label);
        e = find_entry(cur, part.name);
      } else if (!e->value.IsMap()) {
        throw ConfigError(label + ": '" + path + "' is not a section");
      }
      cur.reset(e->value);
      continue;
    }
    // An element of a list of sections: an existing one, or the next one (appended).
    if (!e || e->value.IsNull()) {
      cur[part.name] = YAML::Node(YAML::NodeType::Sequence);
      st.override_origin.emplace(path, label);
      e = find_entry(cur, part.name);
    } else if (!e->value.IsSequence()) {
      throw ConfigError(label + ": '" + path + "' is not a list");
    }
    YAML::Node seq;
    seq.reset(e->value);
    const long n = static_cast<long>(seq.size());
    const std::string elem = element_key(path, part.index);
    if (part.index > n)
      throw ConfigError(label + ": '" + path + "' has " + std::to_string(n) + " element" +
                        (n == 1 ? "" : "s") + ": '" + elem + "' is beyond its end ('" +
                        element_key(path, n) + "' appends one)");
    if (part.index == n) {
      seq.push_back(last ? node : YAML::Node(YAML::NodeType::Map));
      st.override_origin.emplace(elem, label);
    }
    path = elem;
    if (last) {
      if (part.index < n) seq[part.index] = node;
      break;
    }
    YAML::Node item;
    item.reset(seq[part.index]);
    if (item.IsNull()) {
      seq[part.index] = YAML::Node(YAML::NodeType::Map);
      item.reset(seq[part.index]);
    } else if (!item.IsMap()) {
      throw ConfigError(label + ": '" + elem + "' is not a section");
    }
    cur.reset(item);
  }
  if (parts.back().index < 0) cur[parts.back().name] = node;
  // The override replaces the whole subtree, so earlier overrides inside it no longer apply.
  for (auto it = st.override_origin.lower_bound(key); it != st.override_origin.end();) {
    if (it->first == key || it->first.rfind(key + ".", 0) == 0 ||
        it->first.rfind(key + "[", 0) == 0) {
      it = st.override_origin.erase(it);
    } else if (it->first.compare(0, key.size(), key) != 0) {
      break;
    } else {
      ++it;
    }
  }
  st.override_origin[key] = label;
}

void apply_override(LoadState& st, const std::string& text) {
  const std::string label = "--set " + shorten(text);
  const size_t eq = text.find('=');
  if (eq == std::string::npos) throw ConfigError(label + ": expected KEY=VALUE");
  const std::string key = text.substr(0, eq);
  const std::string value = text.substr(eq + 1);
  if (key.empty()) throw ConfigError(label + ": empty key; expected KEY=VALUE");
  const size_t depth = static_cast<size_t>(std::count(key.begin(), key.end(), '.')) + 1;
  if (depth > st.max_depth)
    throw ConfigError(label + ": unknown key '" + shorten(key) + "': " + std::to_string(depth) +
                      " parts, and no key is nested deeper than " + std::to_string(st.max_depth));

  std::vector<KeyPart> parts;
  if (!split_key(key, parts)) throw ConfigError(label + ": malformed key '" + shorten(key) + "'");

  YAML::Node node;
  if (value.empty()) {
    node = YAML::Node(std::string());  // "KEY=" is the empty string, not YAML null
  } else {
    size_t line = 0;
    const std::string bad = check_yaml_text(value, line);
    if (!bad.empty()) throw ConfigError(label + ": invalid YAML value: " + bad);
    YamlText doc;
    try {
      doc = read_yaml(value);
    } catch (const YAML::DeepRecursion& e) {
      throw ConfigError(label + ": invalid YAML value: nested too deeply for the YAML reader (" +
                        std::to_string(e.depth()) + " levels)");
    } catch (const YAML::ParserException& e) {
      throw ConfigError(label + ": invalid YAML value: " + e.msg);
    }
    if (doc.comma)
      throw ConfigError(label + ": invalid YAML value: a ',' in " + position(value, doc.more_at) +
                        " " + kCommaAfterValue);
    // A second document ("1\n---\n2") would otherwise be ignored without a word.
    if (doc.more)
      throw ConfigError(label + ": a second YAML document in the value ('---'); give one value");
    node = doc.root;
  }
  set_path(st, key, node, label);
}

class Loader final : public Visitor {
 public:
  explicit Loader(LoadState& st) : st_(st) { stack_.push_back({"", st.root, false}); }

  void begin_section(const std::string& name, const std::string&) override {
    const std::string path = note(name);
    Frame f{path, YAML::Node(), stack_.back().variant};
    if (auto e = lookup(name)) {
      const std::string loc = consume(path, e->key, st_.consumed_sections);
      if (e->value.IsMap()) {
        f.map = e->value;
        f.variant = f.variant || e->value.Tag() == kVariantTag;
      } else if (!e->value.IsNull()) {  // "section:" with everything commented out is fine
        throw ConfigError(loc + ": " + path + ": expected a section (a mapping of keys), got " +
                          describe(e->value));
      }
    }
    stack_.push_back(f);
  }
  void end_section() override { stack_.pop_back(); }

  void param(const std::string& key, int64_t& v, int64_t def, int64_t min, int64_t max,
             const std::string&, const std::string&) override {
    ranged(key, v, def, min, max);
  }
  void param(const std::string& key, double& v, double def, double min, double max,
             const std::string&, const std::string&) override {
    ranged(key, v, def, min, max);
  }
  void param(const std::string& key, Time& v, Time def, Time min, Time max,
             const std::string&) override {
    ranged(key, v, def, min, max);
  }
  void param(const std::string& key, Bytes& v, Bytes def, Bytes min, Bytes max,
             const std::string&) override {
    ranged(key, v, def, min, max);
  }
  void param(const std::string& key, BitRate& v, BitRate def, BitRate min, BitRate max,
             const std::string&) override {
    ranged(key, v, def, min, max);
  }
  void param(const std::string& key, Frequency& v, Frequency def, Frequency min, Frequency max,
             const std::string&) override {
    ranged(key, v, def, min, max);
  }
  void param(const std::string& key, bool& v, bool def, const std::string&) override {
    load(key, v, def, parse_bool);
  }
  void param(const std::string& key, std::string& v, const std::string& def,
             const std::string&) override {
    load(key, v, def, [](const YAML::Node& n, std::string& out, std::string& err) {
      if (n.IsNull()) {
        err = "expected a string, got no value (write \"\" for an empty string)";
        return false;
      }
      if (!need_scalar(n, "a string", err)) return false;
      const size_t bad = bad_utf8(n.Scalar());
      if (bad != std::string::npos) {
        err = fmt::format("not UTF-8 text: byte 0x{:02x} at offset {} of the string",
                          static_cast<unsigned char>(n.Scalar()[bad]), bad);
        return false;
      }
      out = n.Scalar();
      return true;
    });
  }
  void choice(const std::string& key, std::string& v, const std::string& def,
              const std::vector<std::string>& allowed, const std::string&) override {
    load(key, v, def, [&](const YAML::Node& n, std::string& out, std::string& err) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      if (!need_scalar(n, "one of " + list, err)) return false;
      out = n.Scalar();
      if (std::find(allowed.begin(), allowed.end(), out) != allowed.end()) return true;
      err = "'" + out + "' is not one of " + list;
      const std::string hint = closest(out, allowed);
      if (!hint.empty()) err += "; did you mean '" + hint + "'?";
      return false;
    });
  }
  void list(const std::string& key, std::vector<double>& v, const std::vector<double>& def,
            double min, double max, const std::string&, const std::string&) override {
    // Element errors name the element ("key[2]"), so this one formats its own messages.
    const std::string path = note(key);
    const auto e = lookup(key);
    if (!e) {
      if (!keep_) v = def;
      return;
    }
    const std::string loc = consume(path, e->key, st_.consumed_params);
    if (!e->value.IsSequence()) {
      throw ConfigError(loc + ": " + path + ": expected a list of numbers such as [1, 2], got " +
                        describe(e->value));
    }
    std::vector<double> out;
    for (size_t i = 0; i < e->value.size(); ++i) {
      double x = 0;
      std::string err;
      if (!parse_double(e->value[i], x, err) ||
          !check_range(x, min, max, e->value[i].Scalar(), err)) {
        throw ConfigError(loc + ": " + path + "[" + std::to_string(i) + "]: " + err);
      }
      out.push_back(x);
    }
    v = std::move(out);
  }
  void section_list(const std::string& key, SectionList& list, const std::string&) override {
    const std::string path = note(key);
    const auto e = lookup(key);
    if (!e) {
      if (!keep_) list.reset(0);
      return;
    }
    const std::string loc = consume(path, e->key, st_.consumed_lists);
    if (e->value.IsNull()) {  // "key:" with every element commented out: an empty list
      list.reset(0);
      return;
    }
    if (!e->value.IsSequence())
      throw ConfigError(loc + ": " + path +
                        ": expected a list of sections (a sequence of mappings, '- key: value'), "
                        "got " +
                        describe(e->value));
    list.reset(e->value.size());
    for (size_t i = 0; i < e->value.size(); ++i) {
      const YAML::Node item = e->value[i];
      const std::string elem = element_key(path, static_cast<long>(i));
      const std::string where = st_.element_origin[elem] = st_.where(elem, item);
      if (!item.IsMap())
        throw ConfigError(where + ": " + elem + ": expected a section (a mapping of keys), got " +
                          describe(item));
      stack_.push_back({elem, item, stack_.back().variant});
      const bool keep = keep_;
      keep_ = list.inherits();
      list.at(i).visit(*this);
      keep_ = keep;
      stack_.pop_back();
    }
  }

 private:
  struct Frame {
    std::string path;
    YAML::Node map;        // undefined/null when the section is absent: everything defaults
    bool variant = false;  // in a section the file tags `!variant`
  };

  std::string note(const std::string& name) {
    const std::string path = join_key(stack_.back().path, name);
    st_.children[stack_.back().path].push_back(name);
    st_.known.insert(path);
    return path;
  }
  std::optional<Entry> lookup(const std::string& name) const {
    return find_entry(stack_.back().map, name);
  }
  std::string consume(const std::string& path, const YAML::Node& key, std::set<std::string>& set) {
    set.insert(path);
    const std::string where = st_.where(path, key);
    // A key of a `!variant` section is stated for the configurations made from the file, unless
    // an override gave it.
    if (&set == &st_.consumed_params && stack_.back().variant && where.rfind("--set ", 0) != 0)
      st_.variant.insert(path);
    return st_.origin[path] = where;
  }

  template <class T, class Parse>
  void load(const std::string& key, T& v, const T& def, Parse parse) {
    const std::string path = note(key);
    const auto e = lookup(key);
    if (!e) {
      if (!keep_) v = def;
      return;
    }
    const std::string loc = consume(path, e->key, st_.consumed_params);
    std::string err;
    T out{};
    if (!parse(e->value, out, err)) throw ConfigError(loc + ": " + path + ": " + err);
    v = std::move(out);
  }

  template <class T>
  void ranged(const std::string& key, T& v, T def, T min, T max) {
    load(key, v, def, [&](const YAML::Node& n, T& out, std::string& err) {
      return parse_value(n, out, err) && check_range(out, min, max, n.Scalar(), err);
    });
  }

  LoadState& st_;
  std::vector<Frame> stack_;
  bool keep_ = false;  // in an element of an inheriting list: absent keys keep their values
};

// Every key in the tree must have been consumed by the description; report all that were not.
void find_unknown(const LoadState& st, const YAML::Node& map, const std::string& parent,
                  std::vector<std::string>& errors) {
  std::map<std::string, int> seen;  // name -> 1-based line
  for (const auto& kv : map) {
    const YAML::Node& key = kv.first;
    if (!key.IsScalar()) {
      errors.push_back(st.where(parent, key) + ": " + (parent.empty() ? "top level" : parent) +
                       ": keys must be plain names");
      continue;
    }
    const std::string name = key.Scalar();
    const std::string path = join_key(parent, name);
    const std::string loc = st.where(path, key);
    if (!seen.emplace(name, key.Mark().line + 1).second) {
      errors.push_back(loc + ": duplicate key '" + path + "' (first given on line " +
                       std::to_string(seen[name]) + ")");
    } else if (name.find('.') != std::string::npos) {
      std::string msg = loc + ": unknown key '" + path + "'";
      if (st.known.count(path)) msg += "; write nested keys as nested mappings, not dotted names";
      errors.push_back(msg);
    } else if (st.consumed_sections.count(path)) {
      if (kv.second.IsMap()) find_unknown(st, kv.second, path, errors);
    } else if (st.consumed_lists.count(path)) {
      if (kv.second.IsSequence())
        for (size_t i = 0; i < kv.second.size(); ++i)
          if (kv.second[i].IsMap())
            find_unknown(st, kv.second[i], element_key(path, static_cast<long>(i)), errors);
    } else if (!st.consumed_params.count(path)) {
      std::string msg = loc + ": unknown key '" + path + "'";
      const auto c = st.children.find(parent);
      const std::string hint = c == st.children.end() ? std::string() : closest(name, c->second);
      if (!hint.empty()) msg += "; did you mean '" + join_key(parent, hint) + "'?";
      errors.push_back(msg);
    }
  }
}

YAML::Node read_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw ConfigError(path + ": cannot open: is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot open: " + std::strerror(errno));
  std::ostringstream whole;
  whole << in.rdbuf();
  const std::string text = whole.str();
  size_t bad_line = 0;
  const std::string bad = check_yaml_text(text, bad_line);
  if (!bad.empty()) throw ConfigError(path + ":" + std::to_string(bad_line) + ": " + bad);
  YamlText doc;
  try {
    doc = read_yaml(text);
  } catch (const YAML::DeepRecursion& e) {  // block nesting (flow nesting was caught above)
    throw ConfigError(path + ":" + std::to_string(e.mark.line + 1) +
                      ": nested too deeply for the YAML reader (" + std::to_string(e.depth()) +
                      " levels); no configuration key is nested that deep");
  } catch (const YAML::ParserException& e) {
    throw ConfigError(path + ":" + std::to_string(e.mark.line + 1) +
                      ": YAML syntax error: " + e.msg);
  }
  if (doc.comma)
    throw ConfigError(fmt::format("{}:{}: a ',' in column {} {}", path, doc.more_at.line + 1,
                                  doc.more_at.column + 1, kCommaAfterValue));
  // A second document ("---") would otherwise be ignored without a word.
  if (doc.more)
    throw ConfigError(path + ":" + std::to_string(doc.second_node.line + 1) +
                      ": a second YAML document; a configuration is one document (remove '---')");
  YAML::Node root = doc.root;
  // An empty file is far more often the wrong or a truncated file than a wish for every default.
  if (root.IsNull())
    throw ConfigError(path +
                      ": no configuration keys (the file is empty or only comments); to run on "
                      "every default, write '{}'");
  if (!root.IsMap()) {
    throw ConfigError(path + ":" + std::to_string(root.Mark().line + 1) +
                      ": expected a mapping of keys at the top level, got " + describe(root));
  }
  return root;
}

// ---- output -------------------------------------------------------------------------------------

}  // namespace

void load(Configurable& cfg, const std::string& path, const std::vector<std::string>& overrides,
          KeyOrigins* given) {
  LoadState st;
  st.file = path;
  DepthVisitor depth;
  cfg.visit(depth);
  st.max_depth = depth.max_depth;
  st.root = path.empty() ? YAML::Node(YAML::NodeType::Map) : read_file(path);
  for (const auto& o : overrides) apply_override(st, o);

  Loader loader(st);
  cfg.visit(loader);

  std::vector<std::string> errors;
  find_unknown(st, st.root, "", errors);
  if (!errors.empty()) {
    // All of them, up to a screenful (one --set of 5,000 unknown keys made 5,000 lines).
    constexpr size_t kShown = 20;
    std::string msg;
    for (size_t i = 0; i < errors.size() && i < kShown; ++i)
      msg += (msg.empty() ? "" : "\n") + errors[i];
    if (errors.size() > kShown)
      msg += fmt::format("\n... and {} more such errors", errors.size() - kShown);
    throw ConfigError(msg);
  }

  if (given) {
    given->clear();
    for (const std::string& key : st.consumed_params)
      if (!st.variant.count(key)) (*given)[key] = st.origin.at(key);
  }

  const std::string default_loc = path.empty() ? "(default)" : path + " (default)";
  cfg.validate(Checker([&st, default_loc](const std::string& key) {
    const auto it = st.origin.find(key);
    if (it != st.origin.end()) return it->second;
    // A key an element of a list left out (a default, or inherited): where that element is.
    for (std::string k = key;;) {
      const size_t cut = k.find_last_of(".[");
      if (cut == std::string::npos) break;
      k.resize(cut);
      const auto e = st.element_origin.find(k);
      if (e != st.element_origin.end()) return e->second;
    }
    return default_loc;
  }));
}

namespace {

// Walks a configuration noting each key whose value is not its declared default.
class OffDefault final : public Visitor {
 public:
  std::vector<std::string> keys;
  void begin_section(const std::string& name, const std::string&) override {
    prefix_.push_back(prefix_.empty() ? name + "." : prefix_.back() + name + ".");
  }
  void end_section() override { prefix_.pop_back(); }
  void param(const std::string& k, int64_t& v, int64_t d, int64_t, int64_t, const std::string&,
             const std::string&) override {
    note(k, v != d);
  }
  void param(const std::string& k, double& v, double d, double, double, const std::string&,
             const std::string&) override {
    note(k, v != d);
  }
  void param(const std::string& k, bool& v, bool d, const std::string&) override {
    note(k, v != d);
  }
  void param(const std::string& k, Time& v, Time d, Time, Time, const std::string&) override {
    note(k, !(v == d));
  }
  void param(const std::string& k, Bytes& v, Bytes d, Bytes, Bytes, const std::string&) override {
    note(k, !(v == d));
  }
  void param(const std::string& k, BitRate& v, BitRate d, BitRate, BitRate,
             const std::string&) override {
    note(k, !(v == d));
  }
  void param(const std::string& k, Frequency& v, Frequency d, Frequency, Frequency,
             const std::string&) override {
    note(k, !(v == d));
  }
  void param(const std::string& k, std::string& v, const std::string& d,
             const std::string&) override {
    note(k, v != d);
  }
  void choice(const std::string& k, std::string& v, const std::string& d,
              const std::vector<std::string>&, const std::string&) override {
    note(k, v != d);
  }
  void list(const std::string& k, std::vector<double>& v, const std::vector<double>& d, double,
            double, const std::string&, const std::string&) override {
    note(k, v != d);
  }
  void section_list(const std::string&, SectionList&, const std::string&) override {}

 private:
  void note(const std::string& key, bool off) {
    if (off) keys.push_back(prefix_.empty() ? key : prefix_.back() + key);
  }
  std::vector<std::string> prefix_;
};

}  // namespace

std::vector<std::string> keys_off_default(Configurable& part) {
  OffDefault v;
  part.visit(v);
  return v.keys;
}

std::string closest_name(const std::string& word, const std::vector<std::string>& candidates) {
  return closest(word, candidates);
}

}  // namespace fabricsim::config
