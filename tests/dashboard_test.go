package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// dashboardPath is the Grafana dashboard over moond's /metrics.
var dashboardPath = filepath.Join("..", "dashboards", "moond.json")

// grafanaDashboard is the part of Grafana's dashboard JSON model the test
// reads: panels (rows hold panels of their own when collapsed), their
// queries, and the templating variables.
type grafanaDashboard struct {
	Panels     []grafanaPanel `json:"panels"`
	Templating struct {
		List []grafanaVariable `json:"list"`
	} `json:"templating"`
}

type grafanaVariable struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	Query      json.RawMessage `json:"query"`
	Definition string          `json:"definition"` // label_values(metric, label)
}

type grafanaPanel struct {
	Title      string         `json:"title"`
	Type       string         `json:"type"`
	Datasource *grafanaDS     `json:"datasource"`
	Targets    []grafanaQuery `json:"targets"`
	Panels     []grafanaPanel `json:"panels"`
}

type grafanaDS struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type grafanaQuery struct {
	Expr string `json:"expr"`
}

// promqlWords are the PromQL words that look like metric names but are
// not: operators and modifiers. Functions and aggregations are told apart
// by the parenthesis after them.
var promqlWords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	"bool": true, "offset": true, "and": true, "or": true, "unless": true, "inf": true, "nan": true,
}

// groupingWords are followed by a parenthesised list of label names.
var groupingWords = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true}

// metricNames returns the metric names a PromQL expression selects: the
// identifiers outside strings, label matchers, ranges and label lists,
// and not called as functions.
func metricNames(expr string) []string {
	var names []string
	isStart := func(c byte) bool { return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	isPart := func(c byte) bool { return isStart(c) || c >= '0' && c <= '9' }
	skipTo := func(i int, close byte) int {
		for i < len(expr) && expr[i] != close {
			if expr[i] == '"' { // a string inside a matcher may hold the closer
				i++
				for i < len(expr) && expr[i] != '"' {
					if expr[i] == '\\' {
						i++
					}
					i++
				}
			}
			i++
		}
		return i + 1
	}
	skipSpace := func(i int) int {
		for i < len(expr) && (expr[i] == ' ' || expr[i] == '\n' || expr[i] == '\t') {
			i++
		}
		return i
	}
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			j := i + 1
			for j < len(expr) && expr[j] != c {
				if expr[j] == '\\' {
					j++
				}
				j++
			}
			i = j + 1
		case c == '{':
			i = skipTo(i+1, '}')
		case c == '[':
			i = skipTo(i+1, ']')
		case c >= '0' && c <= '9' || c == '.' || c == '$':
			// A number (1e3, 0.99) or a Grafana variable: not a name.
			j := i + 1
			for j < len(expr) && (isPart(expr[j]) || expr[j] == '.') {
				j++
			}
			i = j
		case isStart(c):
			j := i
			for j < len(expr) && isPart(expr[j]) {
				j++
			}
			word := expr[i:j]
			k := skipSpace(j)
			next := k
			for next < len(expr) && isPart(expr[next]) {
				next++
			}
			nextWord := strings.ToLower(expr[k:next])
			switch {
			case groupingWords[strings.ToLower(word)] && k < len(expr) && expr[k] == '(':
				j = skipTo(k+1, ')')
			case promqlWords[strings.ToLower(word)]:
			case k < len(expr) && expr[k] == '(', nextWord == "by" || nextWord == "without":
				// a function, or an aggregation (sum by (l) (...))
			default:
				names = append(names, word)
			}
			i = j
		default:
			i++
		}
	}
	return names
}

func TestMetricNamesOfPromQL(t *testing.T) {
	cases := map[string][]string{
		`sum by (command) (rate(moond_commands_total{instance=~"$instance"}[$__rate_interval]))`: {"moond_commands_total"},
		`histogram_quantile(0.99, sum by (le) (rate(a_bucket{x="}"}[5m])))`:                      {"a_bucket"},
		`time() - min by (shard) (b) / on (shard) group_left c > 0`:                              {"b", "c"},
		`max(d) > 0 and e offset 5m`: {"d", "e"},
	}
	for expr, want := range cases {
		if got := metricNames(expr); !slices.Equal(got, want) {
			t.Errorf("metricNames(%q) = %q, want %q", expr, got, want)
		}
	}
}

// familyOf maps a series name to its family in a parsed scrape: a
// histogram's _bucket, _sum and _count series belong to the histogram.
func familyOf(fams map[string]*dto.MetricFamily, name string) bool {
	if fams[name] != nil {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			if f := fams[base]; f != nil && (f.GetType() == dto.MetricType_HISTOGRAM || f.GetType() == dto.MetricType_SUMMARY) {
				return true
			}
		}
	}
	return false
}

func loadDashboard(t *testing.T) grafanaDashboard {
	t.Helper()
	b, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	var d grafanaDashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardPath, err)
	}
	return d
}

// dashboardExprs returns every query of the dashboard, by panel title.
func dashboardExprs(t *testing.T, d grafanaDashboard) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	var walk func(ps []grafanaPanel)
	walk = func(ps []grafanaPanel) {
		for _, p := range ps {
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
				t.Errorf("panel %q does not use the datasource variable: %+v", p.Title, p.Datasource)
			}
			if len(p.Targets) == 0 {
				t.Errorf("panel %q has no query", p.Title)
			}
			for _, q := range p.Targets {
				out[p.Title] = append(out[p.Title], q.Expr)
			}
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		// label_values(metric, label): the metric is the selector before
		// the comma.
		sel, ok := strings.CutPrefix(v.Definition, "label_values(")
		sel, _, _ = strings.Cut(sel, ",")
		if !ok {
			t.Errorf("variable %q: query %q is not label_values(metric, label)", v.Name, v.Definition)
		}
		out["variable "+v.Name] = append(out["variable "+v.Name], sel)
	}
	return out
}

func TestDashboardQueriesNameExistingMetrics(t *testing.T) {
	d := loadDashboard(t)
	if !slices.ContainsFunc(d.Templating.List, func(v grafanaVariable) bool {
		return v.Name == "datasource" && v.Type == "datasource" && string(v.Query) == `"prometheus"`
	}) {
		t.Fatal("the dashboard has no Prometheus datasource variable")
	}
	exprs := dashboardExprs(t, d)
	if len(exprs) < 10 {
		t.Fatalf("the dashboard has %d panels with queries", len(exprs))
	}

	// A real scrape, with every family filled: commands, an error, WAL
	// writes under appendfsync always, a checkpoint.
	s, url := startWithMetrics(t, "pool", 2, "--appendfsync", "always")
	c := s.client(2)
	for _, k := range []string{"a", "b", "c", "d"} {
		if err := c.Set(ctx(t), k, "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	c.Incr(ctx(t), "a") // an error reply
	if err := c.Save(ctx(t)).Err(); err != nil {
		t.Fatal(err)
	}
	fams := pollScrape(t, url, func(f map[string]*dto.MetricFamily) []string {
		if sumWhere(f, "moond_commands_failed_total") < 1 || sumWhere(f, "moond_checkpoints_total") < 2 {
			return []string{"the commands and the checkpoint are not in the scrape yet"}
		}
		return nil
	})

	for title, list := range exprs {
		for _, expr := range list {
			names := metricNames(expr)
			if len(names) == 0 {
				t.Errorf("panel %q: no metric in %q", title, expr)
			}
			for _, name := range names {
				if !familyOf(fams, name) {
					t.Errorf("panel %q: %s is not a metric moond exposes (in %q)", title, name, expr)
				}
			}
		}
	}
}
