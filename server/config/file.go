package config

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/moond-db/moond/resp"
)

// Directive is one "name value..." line of a config file or one --name flag.
type Directive struct {
	Name   string
	Args   []string
	Source string // "file:line" or "argv", for error messages
}

// ParseFile reads redis.conf syntax: one directive per line, '#' comments,
// arguments split like redis.conf (double quotes with escapes, single quotes).
func ParseFile(r io.Reader, name string) ([]Directive, error) {
	var out []Directive
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' {
			continue
		}
		args, err := SplitArgs(text)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %q: %w", name, line, text, err)
		}
		if len(args) == 0 {
			continue
		}
		out = append(out, Directive{Name: strings.ToLower(args[0]), Args: args[1:], Source: fmt.Sprintf("%s:%d", name, line)})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	return out, nil
}

// ParseArgs reads a redis-server style command line: an optional config file
// first, then --name value... options (values run until the next --name;
// --name=value also works; a bare --flag means "yes").
func ParseArgs(argv []string) (configFile string, ds []Directive, err error) {
	if len(argv) > 0 && !strings.HasPrefix(argv[0], "--") {
		configFile, argv = argv[0], argv[1:]
	}
	for i := 0; i < len(argv); {
		a := argv[i]
		if !strings.HasPrefix(a, "--") || len(a) == 2 {
			return "", nil, fmt.Errorf("unexpected argument %q: options are --name value", a)
		}
		d := Directive{Name: strings.ToLower(a[2:]), Source: "argv"}
		if name, _, ok := strings.Cut(d.Name, "="); ok {
			d.Name, d.Args = name, []string{a[2+len(name)+1:]} // the value keeps its case
			i++
		} else {
			i++
			for i < len(argv) && !strings.HasPrefix(argv[i], "--") {
				d.Args = append(d.Args, argv[i])
				i++
			}
		}
		if len(d.Args) == 0 {
			d.Args = []string{"yes"}
		}
		ds = append(ds, d)
	}
	return configFile, ds, nil
}

// Apply sets each directive on c; the first failure names its source.
func (c *Config) Apply(ds []Directive) error {
	for _, d := range ds {
		if err := c.Set(d.Name, strings.Join(d.Args, " ")); err != nil {
			return fmt.Errorf("%s: %s %s: %w", d.Source, d.Name, strings.Join(d.Args, " "), err)
		}
	}
	return nil
}

// Load builds the configuration from argv (config file first, flags after,
// flags winning), starting from Default.
func Load(argv []string) (*Config, error) {
	file, flags, err := ParseArgs(argv)
	if err != nil {
		return nil, err
	}
	c := Default()
	if file != "" {
		if c.File, err = filepath.Abs(file); err != nil {
			return nil, fmt.Errorf("config file: %w", err)
		}
		f, err := os.Open(file)
		if err != nil {
			return nil, fmt.Errorf("config file: %w", err)
		}
		ds, err := ParseFile(f, file)
		f.Close()
		if err != nil {
			return nil, err
		}
		if err := c.Apply(ds); err != nil {
			return nil, err
		}
	}
	if err := c.Apply(flags); err != nil {
		return nil, err
	}
	return c, nil
}

var errUnbalanced = errors.New("unbalanced quotes in configuration line")

// SplitArgs splits a configuration line into arguments the way redis.conf
// does, which is the way Redis splits inline commands (resp.SplitArgs).
func SplitArgs(line string) ([]string, error) {
	args, ok := resp.SplitArgs([]byte(line))
	if !ok {
		return nil, errUnbalanced
	}
	return args, nil
}
