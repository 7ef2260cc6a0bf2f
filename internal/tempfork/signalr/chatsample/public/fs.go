package public

import "embed"

//go:embed *
var FS embed.FS
