// The leaderboard's pictures as inline SVG and HTML (no script needed to see them): latency
// against kv_len, fidelity against KV bytes, and the support matrix coloured by status.
#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "attnbench/leaderboard.h"

namespace attnbench {

std::string html_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace {

const char* const kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};
const char* colour(size_t i) { return kPalette[i % (sizeof kPalette / sizeof kPalette[0])]; }

// Plot area inside a W × H picture, legend on the right.
constexpr double W = 640, H = 300, L = 64, R = 190, T = 44, B = 42;

struct Axis {
  double lo, hi;
  bool log;
  double map(double v, double a, double b) const {  // value -> pixel between a (lo) and b (hi)
    const double f = log ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) : (v - lo) / (hi - lo);
    return a + f * (b - a);
  }
  std::vector<double> ticks(bool binary = false) const {
    std::vector<double> t;
    if (log && binary) {  // powers of two (bytes), at most six of them
      const double first = std::ceil(std::log2(lo) - 1e-9), last = std::floor(std::log2(hi) + 1e-9);
      const double step = std::max(1.0, std::ceil((last - first) / 5));
      for (double e = first; e <= last; e += step) t.push_back(std::exp2(e));
      return t;
    }
    if (log) {
      for (double p = std::pow(10.0, std::floor(std::log10(lo))); p <= hi * 1.0001; p *= 10)
        for (double m : {1.0, 2.0, 5.0})
          if (p * m >= lo * 0.9999 && p * m <= hi * 1.0001 && (m == 1.0 || std::log10(hi / lo) < 2.5)) t.push_back(p * m);
      return t;
    }
    const double span = hi - lo, raw = span / 5, p = std::pow(10.0, std::floor(std::log10(raw)));
    const double step = raw / p < 1.5 ? p : raw / p < 3.5 ? 2 * p : raw / p < 7.5 ? 5 * p : 10 * p;
    for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-6; v += step) t.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
    return t;
  }
};

// A range with a little room; for a log axis, positive values only.
Axis axis_of(std::vector<double> v, bool log, bool from_zero) {
  if (log) v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !(x > 0); }), v.end());
  if (v.empty()) return {log ? 1.0 : 0.0, log ? 10.0 : 1.0, log};
  double lo = *std::min_element(v.begin(), v.end()), hi = *std::max_element(v.begin(), v.end());
  if (log) {
    lo = std::pow(10.0, std::floor(std::log10(lo) * 4) / 4);
    hi = std::pow(10.0, std::ceil(std::log10(hi) * 4) / 4);
    if (hi <= lo) hi = lo * 10;
  } else {
    if (from_zero) lo = std::min(lo, 0.0);
    const double pad = (hi - lo) * 0.05;
    if (hi <= lo) {
      hi = lo + 1;
    } else {
      hi += pad;
      if (!from_zero) lo -= pad;
    }
  }
  return {lo, hi, log};
}

std::string tick_label(double v, const std::string& unit) {
  if (unit == "bytes") return lb::fmt_bytes(v);
  return lb::fmt_sig(v);
}

// Frame, grid, ticks and axis titles; returns the opening of the picture.
std::string frame(const std::string& kind, const std::string& title, const std::string& subtitle, const Axis& x,
                  const Axis& y, const std::string& x_title, const std::string& y_title, const std::string& x_unit) {
  std::ostringstream o;
  o << "<svg class=\"plot\" data-kind=\"" << kind << "\" viewBox=\"0 0 " << W << " " << H << "\" width=\"" << W
    << "\" height=\"" << H << "\" role=\"img\" aria-label=\"" << html_escape(title) << "\">";
  o << "<text class=\"ptitle\" x=\"" << L << "\" y=\"16\">" << html_escape(title) << "</text>";
  if (!subtitle.empty()) o << "<text class=\"psub\" x=\"" << L << "\" y=\"31\">" << html_escape(subtitle) << "</text>";
  o << "<rect class=\"area\" x=\"" << L << "\" y=\"" << T << "\" width=\"" << W - L - R << "\" height=\"" << H - T - B << "\"/>";
  for (double t : x.ticks(x_unit == "bytes")) {
    const double px = x.map(t, L, W - R);
    o << "<line class=\"grid\" x1=\"" << px << "\" x2=\"" << px << "\" y1=\"" << T << "\" y2=\"" << H - B << "\"/>";
    o << "<text class=\"tick\" x=\"" << px << "\" y=\"" << H - B + 14 << "\" text-anchor=\"middle\">"
      << html_escape(tick_label(t, x_unit)) << "</text>";
  }
  for (double t : y.ticks()) {
    const double py = y.map(t, H - B, T);
    o << "<line class=\"grid\" x1=\"" << L << "\" x2=\"" << W - R << "\" y1=\"" << py << "\" y2=\"" << py << "\"/>";
    o << "<text class=\"tick\" x=\"" << L - 4 << "\" y=\"" << py + 4 << "\" text-anchor=\"end\">" << lb::fmt_sig(t) << "</text>";
  }
  o << "<text class=\"atitle\" x=\"" << (L + W - R) / 2 << "\" y=\"" << H - 6 << "\" text-anchor=\"middle\">"
    << html_escape(x_title) << "</text>";
  o << "<text class=\"atitle\" transform=\"translate(14," << (T + H - B) / 2 << ") rotate(-90)\" text-anchor=\"middle\">"
    << html_escape(y_title) << "</text>";
  return o.str();
}

std::string legend_entry(size_t i, const std::string& name) {
  std::ostringstream o;
  const double y = T + 8 + 16 * static_cast<double>(i);
  o << "<circle cx=\"" << W - R + 14 << "\" cy=\"" << y << "\" r=\"4\" fill=\"" << colour(i) << "\"/>"
    << "<text class=\"legend\" x=\"" << W - R + 24 << "\" y=\"" << y + 4 << "\">" << html_escape(name) << "</text>";
  return o.str();
}

}  // namespace

std::string latency_plot_svg(const LbLatencyPlot& plot) {
  return line_plot_svg({"latency", plot.title + ": median latency against kv_len", plot.subtitle, "kv_len (log)",
                        "median µs (log)", "kv_len", true, true, "us", plot.series});
}

std::string line_plot_svg(const LbLinePlot& plot) {
  std::vector<double> xs, ys;
  for (const auto& s : plot.series)
    for (const auto& [x, y] : s.points) {
      xs.push_back(x);
      ys.push_back(y);
    }
  const Axis x = axis_of(xs, plot.x_log, !plot.x_log), y = axis_of(ys, plot.y_log, !plot.y_log);
  std::ostringstream o;
  o << frame(plot.kind, plot.title, plot.subtitle, x, y, plot.x_title, plot.y_title, "");
  for (size_t i = 0; i < plot.series.size(); ++i) {
    const LbSeries& s = plot.series[i];
    o << "<g class=\"series\" data-name=\"" << html_escape(s.name) << "\"><polyline fill=\"none\" stroke=\"" << colour(i)
      << "\" stroke-width=\"1.5\" points=\"";
    for (const auto& [px, py] : s.points) o << x.map(px, L, W - R) << "," << y.map(py, H - B, T) << " ";
    o << "\"/>";
    for (const auto& [px, py] : s.points)
      o << "<circle class=\"pt\" cx=\"" << x.map(px, L, W - R) << "\" cy=\"" << y.map(py, H - B, T) << "\" r=\"3\" fill=\""
        << colour(i) << "\"><title>" << html_escape(s.name) << ": " << html_escape(plot.x_name) << "=" << lb::fmt_sig(px, 8) << ", "
        << html_escape(plot.y_unit == "us" ? lb::fmt_us(py) : lb::fmt_sig(py, 4)) << "</title></circle>";
    o << "</g>" << legend_entry(i, s.name);
  }
  o << "</svg>";
  return o.str();
}

std::string fidelity_plot_svg(const LbFidelityFigure& f) {
  std::vector<double> xs, ys;
  std::vector<std::string> methods;
  for (const auto& p : f.points) {
    xs.push_back(p.kv_bytes);
    ys.push_back(p.figures.at(f.figure));
    if (std::find(methods.begin(), methods.end(), p.method) == methods.end()) methods.push_back(p.method);
  }
  const Axis x = axis_of(xs, true, false), y = axis_of(ys, false, true);
  std::ostringstream o;
  o << frame("fidelity", f.figure + " against KV bytes kept", f.subtitle, x, y, "KV bytes kept (log)", f.figure, "bytes");
  for (const auto& p : f.points) {
    const double v = p.figures.at(f.figure);
    const size_t m = std::find(methods.begin(), methods.end(), p.method) - methods.begin();
    o << "<circle class=\"pt\" cx=\"" << x.map(p.kv_bytes, L, W - R) << "\" cy=\"" << y.map(v, H - B, T) << "\" r=\"4\" fill=\""
      << colour(m) << "\" fill-opacity=\"0.8\"><title>" << html_escape(p.case_id) << ": " << f.figure << "=" << lb::fmt_sig(v, 4)
      << ", " << html_escape(lb::fmt_bytes(p.kv_bytes)) << "</title></circle>";
  }
  for (size_t i = 0; i < methods.size(); ++i) o << legend_entry(i, methods[i]);
  o << "</svg>";
  return o.str();
}

// One band per method, a bar per column beside the reference: its geometric-mean ratio on a log
// axis, with the line at 1 that the reference is.
std::string across_plot_svg(const LbAcross& a) {
  std::vector<double> ys = {1.0};
  for (const auto& m : a.methods)
    for (const auto& r : m.ratio)
      if (r) ys.push_back(*r);
  const Axis y = axis_of(ys, true, false);
  const double bottom = H + 60;  // room for the methods' names under the bands
  std::ostringstream o;
  const std::string title = "speedup over " + a.columns[a.reference] + " per method";
  o << "<svg class=\"plot\" data-kind=\"across\" viewBox=\"0 0 " << W << " " << bottom << "\" width=\"" << W << "\" height=\""
    << bottom << "\" role=\"img\" aria-label=\"" << html_escape(title) << "\">";
  o << "<text class=\"ptitle\" x=\"" << L << "\" y=\"16\">" << html_escape(title) << "</text>"
    << "<text class=\"psub\" x=\"" << L << "\" y=\"31\">geometric mean over the method's cases both ran; above 1: faster</text>";
  o << "<rect class=\"area\" x=\"" << L << "\" y=\"" << T << "\" width=\"" << W - L - R << "\" height=\"" << H - T - B << "\"/>";
  for (double t : y.ticks()) {
    const double py = y.map(t, H - B, T);
    o << "<line class=\"grid\" x1=\"" << L << "\" x2=\"" << W - R << "\" y1=\"" << py << "\" y2=\"" << py << "\"/>"
      << "<text class=\"tick\" x=\"" << L - 4 << "\" y=\"" << py + 4 << "\" text-anchor=\"end\">" << lb::fmt_sig(t) << "</text>";
  }
  o << "<text class=\"atitle\" transform=\"translate(14," << (T + H - B) / 2
    << ") rotate(-90)\" text-anchor=\"middle\">speedup (log)</text>";
  const double one = y.map(1.0, H - B, T), band = (W - L - R) / std::max<double>(1.0, static_cast<double>(a.methods.size()));
  const size_t bars = a.columns.size() > 1 ? a.columns.size() - 1 : 1;
  for (size_t m = 0; m < a.methods.size(); ++m) {
    const double x0 = L + band * static_cast<double>(m), bar = band * 0.8 / static_cast<double>(bars);
    size_t slot = 0;
    for (size_t k = 0; k < a.columns.size(); ++k) {
      if (k == a.reference) continue;
      const auto& r = a.methods[m].ratio[k];
      const double x = x0 + band * 0.1 + bar * static_cast<double>(slot++);
      if (!r) continue;
      const double top = std::min(one, y.map(*r, H - B, T)), height = std::fabs(y.map(*r, H - B, T) - one);
      o << "<rect class=\"bar\" x=\"" << x << "\" y=\"" << top << "\" width=\"" << bar << "\" height=\"" << std::max(height, 1.0)
        << "\" fill=\"" << colour(slot - 1) << "\"><title>" << html_escape(a.methods[m].method) << " on "
        << html_escape(a.columns[k]) << ": ×" << lb::fmt_sig(*r) << " over " << a.methods[m].cases[k] << " cases</title></rect>";
    }
    o << "<text class=\"tick\" transform=\"translate(" << x0 + band / 2 << "," << H - B + 8 << ") rotate(60)\">"
      << html_escape(a.methods[m].method) << "</text>";
  }
  o << "<line class=\"one\" x1=\"" << L << "\" x2=\"" << W - R << "\" y1=\"" << one << "\" y2=\"" << one
    << "\" stroke=\"#333\"/>";
  for (size_t k = 0, slot = 0; k < a.columns.size(); ++k)
    if (k != a.reference) o << legend_entry(slot++, a.columns[k]);
  o << "</svg>";
  return o.str();
}

std::string support_matrix_html(const LbMatrix& m) {
  std::ostringstream o;
  o << "<table class=\"matrix\"><thead><tr><th>method</th>";
  for (size_t c = 0; c < m.columns.size(); ++c)
    o << "<th title=\"" << html_escape(m.column_help[c]) << "\">" << html_escape(m.columns[c]) << "</th>";
  o << "</tr></thead><tbody>";
  for (size_t r = 0; r < m.methods.size(); ++r) {
    o << "<tr><th>" << html_escape(m.methods[r]) << "</th>";
    for (size_t c = 0; c < m.columns.size(); ++c) {
      auto it = m.cells.find({r, c});
      if (it == m.cells.end()) {
        o << "<td class=\"st-none\" data-status=\"none\">not run</td>";
        continue;
      }
      std::string title;
      for (const auto& reason : it->second.reasons) title += (title.empty() ? "" : "\n") + reason;
      o << "<td class=\"st-" << it->second.worst << "\" data-status=\"" << it->second.worst << "\" title=\""
        << html_escape(title) << "\">" << html_escape(lb::matrix_cell_text(it->second)) << "</td>";
    }
    o << "</tr>";
  }
  o << "</tbody></table>";
  return o.str();
}

}  // namespace attnbench
