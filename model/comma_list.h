// The items of a comma-separated option value (--fix, --ops, --overlap): an
// empty item, from two commas or one at an end, is a slip (a value left out
// of a script's list), refused rather than read as nothing.
#pragma once

#include <string>
#include <vector>

namespace axo {

// "a,b" -> {"a", "b"}, each item without the spaces around it ("a , b" too); "" -> {}. InputError
// "OPTION: 'TEXT': an empty item (two commas, or one at an end)" for "a,,b", "a,", ",a" or "a, ,b".
std::vector<std::string> comma_list(const std::string& text, const std::string& option);
// `text` without the spaces and tabs at its ends.
std::string trim_spaces(const std::string& text);

}  // namespace axo
