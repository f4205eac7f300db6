package i18n

// N formats a message that depends on a count n: key+".one" when n is 1 and the catalogue
// has that form, else key+".other". n is the first argument of the format, args follow. The
// catalogue's languages all have both forms (Japanese repeats one), so English keeps its
// singulars without the code knowing any language's rules.
func N(l Locale, key Key, n int, args ...any) string {
	k := key + ".other"
	if n == 1 {
		if _, ok := catalogue[key+".one"]; ok {
			k = key + ".one"
		}
	}
	return T(l, k, append([]any{n}, args...)...)
}
