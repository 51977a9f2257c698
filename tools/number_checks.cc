// Checks for the numeric options of the subcommands, and the text checks: empty values and
// option names taken for values (see commands.h).
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "model/comma_list.h"
#include "tools/commands.h"

namespace axo::tools {

namespace {

// `text` as a finite number, or false when it is not one (trailing
// characters, inf, nan and overflow included).
bool parse_number(const std::string& text, double& value) {
  char* end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size() && std::isfinite(value);
}

// A check shown in --help as `name`, failing with "<value> is not <rule>".
CLI::Validator number_check(const char* name, const char* rule, bool (*holds)(double)) {
  return CLI::Validator(
      [rule, holds](std::string& text) -> std::string {
        double value = 0;
        if (!parse_number(text, value)) {
          return "'" + text + "' is not a finite number" +
                 (trim_spaces(text) != text ? std::string(" (spaces around it are not a number's)") : "");
        }
        return holds(value) ? std::string() : text + " is not " + rule;
      },
      name);
}

}  // namespace

CLI::Validator positive() {
  return number_check("POSITIVE", "a positive number", [](double v) { return v > 0; });
}

CLI::Validator non_negative() {
  return number_check("NONNEGATIVE", "zero or more", [](double v) { return v >= 0; });
}

CLI::Validator whole_number_in(uint64_t least, uint64_t most) {
  return CLI::Validator(
      [least, most](std::string& text) -> std::string {
        errno = 0;
        char* end = nullptr;
        const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
        const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
        if (digits && end == text.c_str() + text.size() && errno != ERANGE && value >= least && value <= most) {
          return "";
        }
        return "'" + text + "' is not a whole number from " + std::to_string(least) + " to " + std::to_string(most);
      },
      "UINT");
}

CLI::Validator non_empty(const std::string& what) {
  return CLI::Validator([what](std::string& text) { return text.empty() ? "an empty value " + what : ""; }, "TEXT");
}

std::string option_name_taken_as_value(CLI::App& app, int argc, char** argv) {
  CLI::App* command = &app;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.rfind("--", 0) != 0) {  // a value, or a subcommand's name (data encode)
      for (CLI::App* sub : command->get_subcommands(nullptr)) {
        if (sub->get_name() == word) command = sub;
      }
      continue;
    }
    const size_t equals = word.find('=');
    const std::string name = word.substr(0, equals);
    const CLI::Option* option = command->get_option_no_throw(name);
    if (option == nullptr || option->get_items_expected_min() <= 0) continue;  // a flag takes none
    if (equals != std::string::npos) {  // --name=value; CLI11 hands --name= the next word too
      if (equals + 1 == word.size()) return name + ": an empty value after '=': give " + name + " its value";
      continue;
    }
    if (i + 1 == argc) continue;  // CLI11 says it is missing
    const std::string next = argv[i + 1];
    if (next.rfind("--", 0) == 0) {
      return word + ": '" + next + "' is an option, not a value: give " + word + " its value first";
    }
  }
  return "";
}

}  // namespace axo::tools
