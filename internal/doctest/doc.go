// Package doctest holds no code: its test keeps every package comment of
// the module saying what the package owns in a few lines. Each comment
// starts "Package <name>" ("Command <name>" for a main package), is carried
// by one file built on every platform, stays within maxDocLines lines, and
// every docs/ file it names exists. The reasoning and the choices where the
// spec is silent belong in docs/<package>.md, which the comment points at.
package doctest
