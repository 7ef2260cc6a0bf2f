package configs

import "reflect"

// Settings lists the path of every setting ("bridge.ask_timeout"), in
// declaration order: the keys a file, the environment or a flag can set.
func Settings() []string { return leafPaths(reflect.TypeFor[Config](), "") }

// Changed lists the settings whose values differ between a and b, by
// path, in declaration order (a configuration reload reports them).
func Changed(a, b *Config) []string {
	var out []string
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	for _, path := range Settings() {
		fa, _ := fieldByPath(va, path)
		fb, _ := fieldByPath(vb, path)
		if !reflect.DeepEqual(fa.Interface(), fb.Interface()) {
			out = append(out, path)
		}
	}
	return out
}
