// The subcommands of `axo`. Each add_* function registers one subcommand on
// the CLI11 app; its callback parses nothing itself, calls a library, prints,
// and throws InputError for user mistakes (exit 2) or anything else (exit 1).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>

namespace axo::tools {

void add_plan_command(CLI::App& app);
void add_models_command(CLI::App& app);
void add_machines_command(CLI::App& app);
void add_validate_command(CLI::App& app);
void add_calibrate_command(CLI::App& app);
void add_train_command(CLI::App& app);
void add_data_command(CLI::App& app);
void add_report_command(CLI::App& app);

// Checks for numeric options whose message names the user's value and the
// rule ("--gpus: 0 is not a positive number"), in place of CLI11's
// PositiveNumber and NonNegativeNumber, which spell out the double range.
CLI::Validator positive();
CLI::Validator non_negative();
// A whole number of digits alone from `least` to `most` ("--seed: '-1' is not a whole number from 0
// to 18446744073709551615"): CLI11 would wrap a negative and clamp a larger one into range.
CLI::Validator whole_number_in(uint64_t least, uint64_t most);
// For a text option whose empty value would be taken for the option left out
// (calibrate --name '' for the default name): "an empty value <what>".
CLI::Validator non_empty(const std::string& what);
// The usage error for the first option in `argv` followed by an option's name, which CLI11 would
// hand it as its value (`validate --csv --fit` wrote a file named "--fit"; `--in --out x` said
// "File does not exist: --out"), or given as --name= with nothing after it, which CLI11 also hands
// the next word: "--csv: '--fit' is an option, not a value: ..."; "" when none is.
// Checked before parsing, so that no check of the value speaks first.
std::string option_name_taken_as_value(CLI::App& app, int argc, char** argv);

}  // namespace axo::tools
