#include "models/config/yaml_text.h"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

namespace fabricsim::config {

namespace {

// Flow collections ([ and {) open inside each other deeper than this are refused before the YAML
// reader sees them: no key of the description is nested more than a few levels, and the reader's
// own guard (at 2000) answers "bad file".
constexpr int kMaxNesting = 64;

// A line of block context (outside quotes and [ ] { }) whose first token is a `,`, no deeper than
// the line before it or first in a document: not YAML (a plain scalar cannot begin with a flow
// indicator), and Debian's yaml-cpp 0.7 looped for ever on some of these (`,` first in a document,
// or ` a:` / `- a` then `,b`: found by the config fuzzer, docs/fuzzing.md; read_yaml now stops it,
// and this check still names the problem better than the reader). A deeper one continues
// a plain scalar and is left to the reader. `prev_indent`: the last line with a token's indentation
// in this document (-1: none yet); updated here. Returns the `,`'s column (1-based) or 0.
size_t comma_first(const std::string& text, size_t start, int& prev_indent) {
  size_t k = start;
  if (text.compare(k, 3, "---") == 0 || text.compare(k, 3, "...") == 0) {
    if (k + 3 == text.size() || text[k + 3] == ' ' || text[k + 3] == '\t' || text[k + 3] == '\n' ||
        text[k + 3] == '\r') {
      prev_indent = -1;  // a new document (its first token may follow the marker)
      k += 3;
    }
  } else if (k < text.size() && text[k] == '%' && prev_indent < 0) {
    return 0;  // a directive
  }
  while (k < text.size() && (text[k] == ' ' || text[k] == '\t')) ++k;
  if (k == text.size() || text[k] == '\n' || text[k] == '\r' || text[k] == '#') return 0;
  const int indent = static_cast<int>(k - start);
  if (text[k] == ',' && (prev_indent < 0 || indent <= prev_indent)) return k - start + 1;
  prev_indent = indent;
  return 0;
}

// Watches the events of the YAML reader and stops it at the second document's first node. Debian's
// yaml-cpp 0.7 LoadAll loops for ever, a null document per pass, when the first document ends
// before a token that no node begins with: a ',' after a whole top-level value (`[1],`, `{a: 1},`,
// `"x",`, `!t ,`, `[1]` then ` ,` on the next line). No document is consumed there, so the next
// one starts at the same token, and the next (jbeder/yaml-cpp#1040; LoadAll's loop is bounded
// upstream by #1319, after 0.8). One document is read in bounded time, so reading stops as the
// second begins, whatever follows.
class DocumentWatch final : public YAML::EventHandler {
 public:
  struct Stop {};
  int documents = 0;
  YAML::Mark start;  // the last document's start
  YAML::Mark node;   // the second document's first node

  void OnDocumentStart(const YAML::Mark& m) override {
    ++documents;
    start = m;
  }
  void OnDocumentEnd() override { stop(start); }  // (a second document of no node)
  void OnNull(const YAML::Mark& m, YAML::anchor_t) override { stop(m); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { stop(m); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                const std::string&) override {
    stop(m);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    stop(m);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    stop(m);
  }
  void OnMapEnd() override {}

 private:
  void stop(const YAML::Mark& m) {
    if (documents < 2) return;
    node = m;
    throw Stop{};
  }
};

// The byte of `text` at a reader's mark, or '\0' when it cannot be found (the reader counts
// columns in bytes of UTF-8, after a byte order mark).
char byte_at(const std::string& text, const YAML::Mark& m) {
  size_t at = 0;
  for (int line = 0; line < m.line; ++line) {
    at = text.find('\n', at);
    if (at == std::string::npos) return '\0';
    ++at;
  }
  if (m.line == 0 && text.compare(0, 3, "\xef\xbb\xbf") == 0) at += 3;
  at += static_cast<size_t>(std::max(m.column, 0));
  return at < text.size() ? text[at] : '\0';
}

}  // namespace

std::string check_yaml_text(const std::string& text, size_t& line) {
  line = 1;
  size_t line_start = 0;
  int depth = 0;
  char quote = 0;           // inside a quoted scalar: its quote character
  bool token_start = true;  // a [ or { here opens a collection (not inside a plain scalar)
  int prev_indent = -1;
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if ((i == 0 || text[i - 1] == '\n') && !quote && depth == 0) {
      if (const size_t col = comma_first(text, i, prev_indent))
        return fmt::format(
            "a ',' in column {} where a key or a list item must begin (a ',' separates the "
            "items of a [ ] or {{ }} list only)",
            col);
    }
    if (ch == '\0')
      return fmt::format("a NUL byte (\\x00) in column {}: a configuration is text",
                         i - line_start + 1);
    if (ch == '\n') {
      ++line;
      line_start = i + 1;
      token_start = true;
      continue;
    }
    if (quote) {
      if (quote == '"' && ch == '\\') {
        if (i + 1 < text.size() && text[i + 1] != '\n') ++i;
      } else if (ch == quote) {
        if (quote == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
          ++i;  // '' inside single quotes
        } else {
          quote = 0;
        }
      }
      continue;
    }
    if (ch == '#' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '\t' || text[i - 1] == '\n')) {
      while (i + 1 < text.size() && text[i + 1] != '\n' && text[i + 1] != '\0') ++i;
      continue;
    }
    if ((ch == '"' || ch == '\'') && token_start) {
      quote = ch;
      continue;
    }
    if ((ch == '[' || ch == '{') && token_start) {
      if (++depth > kMaxNesting)
        return fmt::format(
            "nested more than {} levels deep ([ and {{ inside each other); no "
            "configuration key is nested that deep",
            kMaxNesting);
      continue;
    }
    if (ch == ']' || ch == '}') {
      depth = std::max(depth - 1, 0);
      token_start = false;
      continue;
    }
    if (ch == ' ' || ch == '\t' || ch == ',' || ch == ':' || ch == '-' || ch == '?') {
      token_start = true;
      continue;
    }
    token_start = false;
  }
  return "";
}

YamlText read_yaml(const std::string& text) {
  YamlText out;
  {
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentWatch watch;
    try {
      // At most twice: the watch stops the reader as the second document begins.
      while (parser.HandleNextDocument(watch)) {
      }
    } catch (const DocumentWatch::Stop&) {
      out.more = true;
      out.more_at = watch.start;
      out.second_node = watch.node;
      out.comma = byte_at(text, watch.start) == ',';
    }
  }
  // The tree of the first document: YAML::Load reads one document only, so it cannot loop.
  out.root = YAML::Load(text);
  return out;
}

std::string position(const std::string& text, const YAML::Mark& m) {
  if (text.find('\n') == std::string::npos) return fmt::format("column {}", m.column + 1);
  return fmt::format("line {}, column {}", m.line + 1, m.column + 1);
}

}  // namespace fabricsim::config
