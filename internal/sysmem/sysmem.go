// Package sysmem owns reading the machine's total RAM, which the Automate
// server reports on /health (totalMemoryBytes) and the engines use for
// their context-size rule (assistant.ContextSizeForRAM) and, for the
// OpenAI-compatible engine, availableForDevice.
//
// Choices: on Linux the value is sysinfo(2)'s totalram (the kernel's
// MemTotal, in bytes); elsewhere it is unknown and TotalRAM returns 0, which
// every caller treats as "unknown".
package sysmem
