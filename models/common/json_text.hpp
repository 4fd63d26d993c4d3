// JSON text of a nlohmann::json tree, written straight into a string: exactly what
// j.dump(indentStep) writes (same key order, spacing, escapes and number formats, invalid UTF-8
// rejected alike), without its per-character output adapter and with every line after the first
// indented by `currentIndent` more spaces, as when the tree is an element nested that deep in a
// larger document. stats.json is written with it: its per-launch entries run to hundreds of KB.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace gpusc {

// Appends the text of `j` to `out`: j.dump(indentStep) when currentIndent is 0. indentStep < 0
// writes the compact form (j.dump()).
void appendJson(std::string& out, const nlohmann::json& j, int indentStep = 2,
                unsigned currentIndent = 0);

}  // namespace gpusc
