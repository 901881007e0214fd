// SPDX-License-Identifier: GPL-2.0
/*
 * The guest's /bin/sh: just enough for system(), which some timer
 * selftests use to start others ("./inconsistency-check -c 0 -t 20").
 * It runs one simple command: words split on blanks, no quoting,
 * redirection, pipes or variables; anything else exits 127 with a message,
 * as a real shell would for a command it cannot find.
 */

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MAX_WORDS 32

int main(int argc, char *argv[])
{
	char *words[MAX_WORDS + 1];
	char *save, *word;
	int count = 0;

	if (argc != 3 || strcmp(argv[1], "-c")) {
		fprintf(stderr, "sh: the guest shell only runs: sh -c 'command args'\n");
		return 127;
	}
	if (strpbrk(argv[2], "|&;<>()$`\\\"'*?[]{}~")) {
		fprintf(stderr, "sh: the guest shell cannot run shell syntax: %s\n", argv[2]);
		return 127;
	}
	for (word = strtok_r(argv[2], " \t\n", &save); word && count < MAX_WORDS;
	     word = strtok_r(NULL, " \t\n", &save))
		words[count++] = word;
	words[count] = NULL;
	if (!count)
		return 0;
	execvp(words[0], words);
	fprintf(stderr, "sh: %s: not found\n", words[0]);
	return 127;
}
