package config

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
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

// SplitArgs splits a line into arguments the way redis.conf does: spaces
// separate; "double quotes" allow \n \r \t \b \a \\ \" and \xHH; 'single
// quotes' allow only \'. A closing quote must be followed by a space or the end.
func SplitArgs(line string) ([]string, error) {
	var args []string
	i := 0
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i >= len(line) {
			return args, nil
		}
		var cur strings.Builder
		inDq, inSq := false, false
		for done := false; !done; {
			if i >= len(line) {
				if inDq || inSq {
					return nil, errUnbalanced
				}
				break
			}
			ch := line[i]
			switch {
			case inDq:
				switch {
				case ch == '\\' && i+3 < len(line) && line[i+1] == 'x' && isHex(line[i+2]) && isHex(line[i+3]):
					v, _ := strconv.ParseUint(line[i+2:i+4], 16, 8)
					cur.WriteByte(byte(v))
					i += 3
				case ch == '\\' && i+1 < len(line):
					i++
					cur.WriteByte(unescape(line[i]))
				case ch == '"':
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return nil, errUnbalanced
					}
					done = true
				default:
					cur.WriteByte(ch)
				}
			case inSq:
				switch {
				case ch == '\\' && i+1 < len(line) && line[i+1] == '\'':
					i++
					cur.WriteByte('\'')
				case ch == '\'':
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return nil, errUnbalanced
					}
					done = true
				default:
					cur.WriteByte(ch)
				}
			default:
				switch {
				case isSpace(ch):
					done = true
				case ch == '"':
					inDq = true
				case ch == '\'':
					inSq = true
				default:
					cur.WriteByte(ch)
				}
			}
			i++
		}
		args = append(args, cur.String())
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'a':
		return '\a'
	}
	return c
}
