# lib.sh: what the bench scripts share. Source it; it defines functions only.

# write_section FILE START END SECTION HEADING: put the contents of the file
# SECTION between the marker lines START and END of the Markdown file FILE,
# replacing what was there, or append them under "## HEADING" when FILE has
# no such markers yet.
write_section() {
	local file=$1 start=$2 end=$3 section=$4 heading=$5 tmp
	if grep -qxF "$start" "$file" 2>/dev/null && grep -qxF "$end" "$file"; then
		tmp=$(mktemp)
		awk -v s="$start" -v e="$end" -v f="$section" '
			$0 == s { print; while ((getline l < f) > 0) print l; skip = 1; next }
			$0 == e { skip = 0 }
			!skip { print }' "$file" >"$tmp" && cat "$tmp" >"$file"
		rm -f "$tmp"
	else
		{ echo; echo "## $heading"; echo; echo "$start"; cat "$section"; echo "$end"; } >>"$file"
	fi
}
