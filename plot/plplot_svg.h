// Drawing with PLplot's "svg" device into a string, for the report's charts and the
// planner's picture of the searched space (axo_plot: both may use it).
//
// PLplot writes its output to a file named by plsfnam() and, when it cannot
// open that file, asks for another name on stdin and finally exit()s. So the
// drawing goes to a fresh file that mkstemp() has just created in the system
// temporary folder (always openable), which is read back and removed; the
// caller then writes the text where it belongs (write_file_atomically, so a
// reader never sees a partial plot and an unwritable target is an ordinary
// error). PLplot keeps global state: one drawing runs at a time (a mutex),
// each on a stream of its own, ended with plend1().
#pragma once

#include <functional>
#include <string>

namespace axo {

// Palette set on every stream (cmap0 indices), for the drawing callbacks.
inline constexpr int kPlotBackground = 0;  // white
inline constexpr int kPlotInk = 1;         // black: axes, labels
inline constexpr int kPlotGuide = 2;       // grey: reference lines
inline constexpr int kPlotFirstSeries = 3; // kPlotSeriesCount distinct colours from here
inline constexpr int kPlotSeriesCount = 8;

// Runs `draw` (PLplot calls: plenv or plvpor/plwind/plbox, plfill, ...) on a
// page of width × height points after plinit(), and returns the SVG text.
// Throws std::runtime_error when PLplot produced no SVG; rethrows what `draw` throws.
std::string render_svg(int width, int height, const std::function<void()>& draw);

}  // namespace axo
