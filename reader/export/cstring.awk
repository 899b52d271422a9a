# ljlog build: a text file as a C string literal named by -v name=NAME.
# Each line becomes "...\n" with backslashes and double quotes escaped.
BEGIN { print "/* Generated from reader/export/flame.html: do not edit. */"
	print "static const char " name "[] =" }
{
	s = $0
	out = ""
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c == "\\" || c == "\"")
			out = out "\\" c
		else
			out = out c
	}
	print "\t\"" out "\\n\""
}
END { print ";" }
