// Small string helpers shared by the configuration, launch-spec and command-line code.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpusc {

std::vector<std::string> split(std::string_view s, char sep);
std::string_view trim(std::string_view s);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
bool startsWith(std::string_view s, std::string_view prefix);
bool endsWith(std::string_view s, std::string_view suffix);

// Levenshtein distance, used to suggest the valid name closest to a misspelled one.
size_t editDistance(std::string_view a, std::string_view b);

// The candidate closest to `name`, or "" when none is plausibly a misspelling of it.
std::string closestMatch(std::string_view name, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" or "" — ready to append to an error message.
std::string didYouMean(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace gpusc
