// "Did you mean ...?": the candidate nearest to a misspelt word, for error messages.
#pragma once

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

namespace nnd {

// Levenshtein distance (insert, delete, substitute; each costs 1).
inline size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// The closest of `candidates` to `word` when it is near enough to be a plausible typo (a few
// edits relative to the word's length: "max_btach", "engin", "isa_"), else "".
inline std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = std::numeric_limits<size_t>::max();
  for (const std::string& c : candidates) {
    const size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  const size_t limit = std::max<size_t>(2, std::min(word.size(), best.size()) / 3);
  return best_d <= limit ? best : std::string();
}

}  // namespace nnd
