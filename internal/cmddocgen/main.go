// Command cmddocgen writes server/command_docs_gen.go: the COMMAND DOCS
// entries, command tips and key specs of every command and subcommand
// moond has, as a redis-server 7.0 answers them, so that moond's COMMAND
// DOCS and COMMAND INFO answer the same. It is run by hand, against a
// running redis-server of the version moond follows, after a command is
// added:
//
//	redis-server --port 6399 --save '' &
//	go run ./internal/cmddocgen -redis 127.0.0.1:6399 -o server/command_docs_gen.go
//
// The text it writes is Redis's command documentation (BSD-3-Clause,
// Redis Ltd.), which the generated file's header says.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"go/format"
	"net"
	"os"
	"sort"
	"strings"

	"github.com/moond-db/moond/server"
)

func main() {
	addr := flag.String("redis", "127.0.0.1:6379", "address of a redis-server 7.0")
	out := flag.String("o", "server/command_docs_gen.go", "the Go file to write")
	flag.Parse()
	if err := run(*addr, *out); err != nil {
		fmt.Fprintln(os.Stderr, "cmddocgen:", err)
		os.Exit(1)
	}
}

// tables is what the generated file holds, keyed by full command name
// ("get", "config|get").
type tables struct {
	version string
	docs    map[string]value // COMMAND DOCS entries less their subcommands
	tips    map[string]value // COMMAND INFO's 8th element
	specs   map[string]value // COMMAND INFO's 9th element
}

func run(addr, out string) error {
	t, err := fetch(addr)
	if err != nil {
		return err
	}
	var missing []string
	for _, name := range server.CommandNames() {
		if _, ok := t.docs[name]; !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("redis-server documents no %s", strings.Join(missing, ", "))
	}
	src, err := format.Source(t.render(server.CommandNames()))
	if err != nil {
		return fmt.Errorf("format the generated file: %w", err)
	}
	if err := os.WriteFile(out, src, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	return nil
}

// fetch asks the redis-server at addr, in RESP3, for its version and for
// COMMAND DOCS and COMMAND INFO of every command.
func fetch(addr string) (*tables, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("connect to redis-server: %w", err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	ask := func(cmd string) (value, error) {
		if _, err := fmt.Fprintf(conn, "%s\r\n", cmd); err != nil {
			return value{}, fmt.Errorf("send %s: %w", cmd, err)
		}
		return readValue(r)
	}
	hello, err := ask("HELLO 3")
	if err != nil {
		return nil, err
	}
	version, _ := hello.field("version")
	docs, err := ask("COMMAND DOCS")
	if err != nil {
		return nil, err
	}
	info, err := ask("COMMAND INFO")
	if err != nil {
		return nil, err
	}
	t := &tables{version: version.str, docs: map[string]value{}, tips: map[string]value{}, specs: map[string]value{}}
	t.addDocs(docs)
	t.addInfo(info)
	return t, nil
}

// addDocs records a COMMAND DOCS map, its subcommands under their full
// names.
func (t *tables) addDocs(docs value) {
	for i := 0; i+1 < len(docs.elems); i += 2 {
		name, doc := docs.elems[i].str, docs.elems[i+1]
		t.docs[name] = doc.without("subcommands")
		if subs, ok := doc.field("subcommands"); ok {
			t.addDocs(subs)
		}
	}
}

// addInfo records the tips and key specs of COMMAND INFO entries and of
// their subcommands.
func (t *tables) addInfo(entries value) {
	for _, e := range entries.elems {
		if len(e.elems) < 10 {
			continue
		}
		name := e.elems[0].str
		t.tips[name], t.specs[name] = e.elems[7], e.elems[8]
		t.addInfo(e.elems[9])
	}
}

// render writes the Go source of the tables' entries for names.
func (t *tables) render(names []string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, header, t.version)
	for _, table := range []struct {
		doc, name string
		m         map[string]value
	}{
		{"commandDocs are the COMMAND DOCS entries, less their subcommands.", "commandDocs", t.docs},
		{"commandTips are COMMAND INFO's command tips, where there are some.", "commandTips", t.tips},
		{"commandKeySpecs are COMMAND INFO's key specs, where there are some.", "commandKeySpecs", t.specs},
	} {
		fmt.Fprintf(&b, "\n// %s\nvar %s = map[string]replyValue{\n", table.doc, table.name)
		sorted := append([]string(nil), names...)
		sort.Strings(sorted)
		for _, name := range sorted {
			if v := table.m[name]; v.kind != '%' && len(v.elems) == 0 {
				continue // no tips or key specs: moond answers an empty set
			}
			fmt.Fprintf(&b, "%q: ", name)
			writeValue(&b, table.m[name])
			b.WriteString(",\n")
		}
		b.WriteString("}\n")
	}
	return []byte(b.String())
}

// writeValue writes v as a call of the replyValue constructors.
func writeValue(b *strings.Builder, v value) {
	switch v.kind {
	case '$':
		fmt.Fprintf(b, "rvBulk(%q)", v.str)
	case '+':
		fmt.Fprintf(b, "rvSimple(%q)", v.str)
	case ':':
		fmt.Fprintf(b, "rvInt(%d)", v.num)
	default:
		ctor := map[byte]string{'*': "rvArray", '%': "rvMap", '~': "rvSet", 0: "rvArray"}[v.kind]
		b.WriteString(ctor + "(")
		for i, e := range v.elems {
			if breaksBefore(v, i) {
				b.WriteString("\n")
			}
			writeValue(b, e)
			if i < len(v.elems)-1 || len(v.elems) > 2 {
				b.WriteString(", ")
			}
		}
		b.WriteString(")")
	}
}

// breaksBefore reports whether the element i of the aggregate v starts a
// line: a map's every key, any aggregate's element when it has more than
// two or holds aggregates.
func breaksBefore(v value, i int) bool {
	if v.kind == '%' {
		return i%2 == 0
	}
	e := v.elems[i]
	return len(v.elems) > 2 || e.kind == '%' || e.kind == '*'
}

const header = `// Code generated by internal/cmddocgen from redis-server %s; DO NOT EDIT.

// The command documentation, command tips and key specs below are
// Redis's, as redis-server answers COMMAND DOCS and COMMAND INFO:
// Copyright (c) 2006-2022, Redis Ltd. and contributors, under the
// BSD-3-Clause license (https://github.com/redis/redis/blob/7.0/COPYING).

package server
`
