// leaderboard.html: one self-contained page (inline CSS, JS and SVG; nothing is fetched). The
// tables are the Markdown's sections; a small script sorts them (click a header) and filters them
// (text and status), keeping its state in the URL fragment (#filter=…&status=…&sort=key:asc) so
// a link reproduces a view. Plots and the support matrix are static SVG/HTML.
#include <sstream>

#include "attnbench/leaderboard.h"

namespace attnbench {

namespace {

const char* kCss = R"css(
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;background:#fff}
h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.25em;margin-top:1.6em;border-bottom:1px solid #ccc}
h3{font-size:1.05em;margin:1.2em 0 .4em}
table{border-collapse:collapse;margin:.3em 0 1em}th,td{border:1px solid #d8d8d8;padding:3px 6px;text-align:left;vertical-align:top}
table.lb th{background:#f2f2f2;cursor:pointer;white-space:nowrap;user-select:none}
table.lb th[data-sorted=asc]::after{content:" \25B2"}table.lb th[data-sorted=desc]::after{content:" \25BC"}
table.lb td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.scroll{overflow-x:auto;max-width:100%}
.st-pass{background:#dff3df}.st-noisy{background:#dff3df;font-style:italic}.st-fail,.st-error,.st-crashed,.st-timeout{background:#f9d0d0}
.st-unsupported{background:#e6e6e6;color:#555}.st-skipped{background:#f3f3f3;color:#777}.st-none{color:#aaa}
table.runs td:first-child{white-space:nowrap;font-weight:600}
#controls{position:sticky;top:0;background:#fff;padding:.4em 0;border-bottom:1px solid #eee;z-index:1}
#controls input{width:22em}
.plots{display:flex;flex-wrap:wrap;gap:12px}
svg.plot{border:1px solid #ddd;background:#fff}svg .area{fill:#fcfcfc;stroke:#999}svg .grid{stroke:#e4e4e4}
svg text{font:11px system-ui,sans-serif;fill:#333}svg .ptitle{font-weight:600;font-size:12px}svg .psub{font-size:10px;fill:#666}
code{font-size:12px}details{margin:.3em 0}
)css";

const char* kJs = R"js(
(function () {
  var filter = document.getElementById('filter'), status = document.getElementById('status');
  var tables = Array.prototype.slice.call(document.querySelectorAll('table.lb'));
  var sortKey = '', sortDir = 'asc';
  function readHash() {
    var h = {};
    location.hash.replace(/^#/, '').split('&').forEach(function (kv) {
      var i = kv.indexOf('=');
      if (i > 0) h[decodeURIComponent(kv.slice(0, i))] = decodeURIComponent(kv.slice(i + 1));
    });
    return h;
  }
  function writeHash() {
    var parts = [];
    if (filter.value) parts.push('filter=' + encodeURIComponent(filter.value));
    if (status.value) parts.push('status=' + encodeURIComponent(status.value));
    if (sortKey) parts.push('sort=' + encodeURIComponent(sortKey + ':' + sortDir));
    var h = parts.length ? '#' + parts.join('&') : '';
    if (location.hash !== h && history.replaceState) history.replaceState(null, '', h || location.pathname);
  }
  function apply() {
    var q = filter.value.toLowerCase(), st = status.value, shown = 0;
    tables.forEach(function (t) {
      var visible = 0;
      Array.prototype.forEach.call(t.tBodies[0].rows, function (tr) {
        var ok = (!q || tr.textContent.toLowerCase().indexOf(q) >= 0) && (!st || tr.getAttribute('data-status') === st);
        tr.hidden = !ok;
        if (ok) visible++;
      });
      t.closest('section').hidden = visible === 0;
      shown += visible;
    });
    Array.prototype.forEach.call(document.querySelectorAll('div.family'), function (f) {
      f.hidden = f.querySelectorAll('section:not([hidden])').length === 0;
    });
    document.getElementById('shown').textContent = shown;
    document.body.setAttribute('data-shown-rows', shown);
    writeHash();
  }
  function cellKey(td) {
    var v = td.getAttribute('data-v');
    return v === null ? null : parseFloat(v);
  }
  function sortTable(t, key, dir) {
    var ths = t.tHead.rows[0].cells, col = -1;
    for (var i = 0; i < ths.length; i++) {
      ths[i].removeAttribute('data-sorted');
      if (ths[i].getAttribute('data-key') === key) col = i;
    }
    if (col < 0) return;
    ths[col].setAttribute('data-sorted', dir);
    var rows = Array.prototype.slice.call(t.tBodies[0].rows);
    rows.forEach(function (r, i) { r._i = i; });
    var sign = dir === 'desc' ? -1 : 1;
    rows.sort(function (a, b) {
      var x = a.cells[col], y = b.cells[col], kx = cellKey(x), ky = cellKey(y), c;
      if (kx !== null || ky !== null) {
        if (kx === null) return 1;   // cells without a value go last either way
        if (ky === null) return -1;
        c = kx - ky;
      } else {
        c = x.textContent.localeCompare(y.textContent);
      }
      return c !== 0 ? sign * c : a._i - b._i;
    });
    rows.forEach(function (r) { t.tBodies[0].appendChild(r); });
  }
  function sortAll(key, dir) {
    sortKey = key;
    sortDir = dir;
    tables.forEach(function (t) { sortTable(t, key, dir); });
    writeHash();
  }
  tables.forEach(function (t) {
    Array.prototype.forEach.call(t.tHead.rows[0].cells, function (th) {
      th.addEventListener('click', function () {
        var key = th.getAttribute('data-key');
        sortAll(key, sortKey === key && sortDir === 'asc' ? 'desc' : 'asc');
      });
    });
  });
  filter.addEventListener('input', apply);
  status.addEventListener('change', apply);
  var h = readHash();
  if (h.filter) filter.value = h.filter;
  if (h.status) status.value = h.status;
  if (h.sort) {
    var i = h.sort.lastIndexOf(':');
    sortAll(i > 0 ? h.sort.slice(0, i) : h.sort, i > 0 ? h.sort.slice(i + 1) : 'asc');
  }
  apply();
  document.body.setAttribute('data-ready', '1');
})();
)js";

// A sortable table; `cls` adds to its class (the page's script sorts and filters every table.lb).
std::string table_html(const LbSection& sec, const std::string& cls = "") {
  std::ostringstream o;
  size_t status_col = 0;
  for (size_t k = 0; k < sec.columns.size(); ++k)
    if (sec.columns[k].key == "status") status_col = k;
  o << "<table class=\"lb" << (cls.empty() ? "" : " " + cls) << "\"><thead><tr>";
  for (const auto& c : sec.columns)
    o << "<th data-key=\"" << html_escape(c.key) << "\" title=\"" << html_escape(c.help) << "\">" << html_escape(c.title) << "</th>";
  o << "</tr></thead><tbody>";
  for (const auto& cells : sec.rows) {
    o << "<tr data-status=\"" << html_escape(cells[status_col].cls) << "\">";
    for (const auto& c : cells) {
      std::string cls = c.cls.empty() ? "" : "st-" + c.cls;
      if (c.sort) cls += cls.empty() ? "num" : " num";
      o << "<td";
      if (!cls.empty()) o << " class=\"" << cls << "\"";
      if (c.sort) o << " data-v=\"" << lb::fmt_sig(*c.sort, 12) << "\"";
      if (!c.title.empty()) o << " title=\"" << html_escape(c.title) << "\"";
      o << ">" << html_escape(c.text) << "</td>";
    }
    o << "</tr>";
  }
  o << "</tbody></table>";
  return o.str();
}

}  // namespace

std::string leaderboard_html(const Leaderboard& lb) {
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
    << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>attnbench leaderboard</title><style>"
    << kCss << "</style></head><body>\n";
  o << "<h1>attnbench leaderboard</h1><p>Generated by <code>" << html_escape(lb.command_line) << "</code> from "
    << lb.sources.size() << " results file" << (lb.sources.size() == 1 ? "" : "s")
    << ". A row is a method on a backend, variant and device at its headline case (the suite's <code>headline</code> "
       "case, else the case with the most work). Hover a cell for how it was derived; click a header to sort.</p>\n";

  o << "<h2>Runs</h2>";
  for (size_t i = 0; i < lb.sources.size(); ++i) {
    o << "<h3>[" << i + 1 << "]</h3><table class=\"runs\"><tbody>";
    for (const auto& [field, text] : lb::source_summary(lb.sources[i]))
      o << "<tr><td>" << html_escape(field) << "</td><td>" << html_escape(text) << "</td></tr>";
    o << "</tbody></table>";
  }

  o << "<div id=\"controls\">filter <input id=\"filter\" type=\"search\" placeholder=\"method, backend, device, status…\"> "
    << "status <select id=\"status\"><option value=\"\">any</option>";
  for (const std::string& s : lb::shown_statuses()) o << "<option value=\"" << s << "\">" << s << "</option>";
  o << "</select> <span id=\"shown\"></span> rows shown</div>\n";

  std::string family;
  for (const LbSection& sec : lb.sections) {
    if (sec.family != family) {
      o << (family.empty() ? "" : "</div>") << "<div class=\"family\"><h2>" << html_escape(sec.family) << "</h2>";
      family = sec.family;
    }
    o << "<section data-family=\"" << html_escape(sec.family) << "\"" << (sec.inputs.empty() ? "" : " data-replayed=\"true\"")
      << "><h3>" << html_escape(sec.device) << " · " << html_escape(sec.dtype)
      << (sec.inputs.empty() ? "" : " · " + html_escape(sec.inputs)) << "</h3><div class=\"scroll\">" << table_html(sec) << "</div><details><summary>headline cases</summary><ul>";
    for (const auto& [what, id] : sec.cases) o << "<li>" << html_escape(what) << ": <code>" << html_escape(id) << "</code></li>";
    o << "</ul></details></section>\n";
  }
  if (!family.empty()) o << "</div>";

  if (!lb.compression_points.empty()) {
    o << "<div class=\"family\"><h2>KV compression at each compression point</h2><p>Every method that compressed "
         "the same cache to the same point, ranked by fidelity on held-out queries, with the compression's time, the "
         "bytes it keeps and the decode speedup it buys.</p>";
    for (const LbSection& sec : lb.compression_points) {
      o << "<section data-family=\"" << html_escape(sec.family) << "\"><h3>" << html_escape(sec.title) << " · "
        << html_escape(sec.device) << " · " << html_escape(sec.dtype) << "</h3><div class=\"scroll\">" << table_html(sec)
        << "</div></section>\n";
    }
    o << "<div class=\"plots\" id=\"compression-plots\">";
    for (const auto& p : lb.compression_plots) o << line_plot_svg(p);
    o << "</div></div>\n";
  }

  if (!lb.across.empty()) {
    const LbAcross& a = lb.across;
    o << "<div class=\"family\" id=\"across\"><h2>Backends side by side</h2><p>Every case that ran on two columns or more "
         "(a column is a backend on a device, from any of the files), with the fastest passing variant of each and the "
         "ratio of the reference column's median, " << html_escape(a.columns[a.reference])
      << ", to each other column's: above 1, that column is faster. Columns: ";
    for (size_t i = 0; i < a.columns.size(); ++i)
      o << (i ? "; " : "") << "<b>" << html_escape(a.columns[i]) << "</b> " << html_escape(a.column_help[i]);
    o << ".</p><div class=\"plots\">" << across_plot_svg(a) << "</div>";
    for (const LbSection& sec : a.sections)
      o << "<section data-family=\"" << html_escape(sec.family) << "\"><h3>" << html_escape(sec.family) << " · "
        << html_escape(sec.title) << "</h3><div class=\"scroll\">" << table_html(sec, "across") << "</div></section>\n";
    o << "</div>\n";
  }

  o << "<h2>Latency against kv_len</h2><div class=\"plots\" id=\"latency-plots\">";
  for (const auto& p : lb.latency_plots) o << latency_plot_svg(p);
  if (lb.latency_plots.empty()) o << "<p>No method was timed at two kv lengths.</p>";
  o << "</div>\n<h2>Fidelity against KV bytes</h2><div class=\"plots\" id=\"fidelity-plots\">";
  for (const auto& f : lb.fidelity) o << fidelity_plot_svg(f);
  if (lb.fidelity.empty()) o << "<p>No record carries KV bytes and a fidelity figure.</p>";
  o << "</div>\n<h2>Support matrix</h2><p>Rows of each method on each backend, by status; a cell is coloured by its "
       "worst status (unsupported and skipped only when nothing ran); a noisy pass is a pass, counted apart with its "
       "largest cv. Hover for reasons.</p><div id=\"matrix\">"
    << support_matrix_html(lb.matrix) << "</div>\n";
  o << "<script>" << kJs << "</script>\n</body></html>\n";
  return o.str();
}

}  // namespace attnbench
