// Reading YAML text (a configuration file, a --set value) in time bounded by its length: what the
// YAML reader would misreport or loop on, found in the text first (check_yaml_text), and its first
// document read with what follows it noticed (read_yaml). Debian's yaml-cpp 0.7 loops for ever on
// some inputs (jbeder/yaml-cpp#1040: a ',' after a whole top-level value); nothing here can.
// Plain C++, for models/config/config.cpp.
#pragma once

#include <cstddef>
#include <string>

#include <yaml-cpp/yaml.h>

namespace fabricsim::config {

// What the YAML reader finds in a text: its first document, and whether anything follows it.
struct YamlText {
  YAML::Node root;         // the first document (null when the text has none)
  bool more = false;       // something follows the first document ...
  bool comma = false;      // ... and it begins with a ',' (not a second document: not YAML)
  YAML::Mark more_at;      // where what follows begins (the ',' or the second document's start)
  YAML::Mark second_node;  // the second document's first node (its line names the document)
};

// What the YAML reader would misreport, found in the text first: a NUL byte (the reader stops at
// it and blames a later line), nesting deeper than 64 levels, a ',' where a key or list item must
// begin. Returns "" or the problem, with its 1-based line in `line`.
std::string check_yaml_text(const std::string& text, size_t& line);

// Reads the first YAML document of `text` and finds whether anything follows it, in time bounded
// by the text's length. Throws what the reader throws for bad syntax in the first document or at
// the start of the second (YAML::ParserException, YAML::DeepRecursion).
YamlText read_yaml(const std::string& text);

// "column C" or "line L, column C" (1-based) of a mark in a one-line or longer text.
std::string position(const std::string& text, const YAML::Mark& m);

}  // namespace fabricsim::config
