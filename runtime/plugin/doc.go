// Package plugin installs, uninstalls and verifies sitter plugin bundles
// (artifacts/<plugin>/<harness>/): it copies a bundle to a stable place,
// merges its hook registrations into the harness's own config file (or
// writes the module file a programmatic harness loads) without touching
// anything of the user's, and checks a bundle against the layout and the
// JSON Schemas of its packaging format.
package plugin
