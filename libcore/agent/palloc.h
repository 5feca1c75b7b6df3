/* SPDX-License-Identifier: MIT */
/* The public control API that libpalloc.so exports beside the malloc family. */
#ifndef PALLOC_H
#define PALLOC_H

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Write the current heap profile now, as the exit dump would, to PATH, or to
 * the next name of the PALLOC_OUTPUT pattern when PATH is NULL. The file is
 * written under a temporary name and renamed. Returns 0, or -1 with errno
 * set (EAGAIN: the agent is not initialised; ENOMEM: its arena is full;
 * others from open/write/rename). Thread-safe; not async-signal-safe.
 * Under palloc-run the agent writes this file itself too (palloc-run, which
 * writes the other profiles from the record, neither lists nor symbolizes
 * it; with PATH NULL its %n may be one palloc-run gives as well: pass a
 * PATH there).
 * A program calls it through dlsym(RTLD_DEFAULT, "palloc_dump") so that it
 * still runs without the agent.
 */
int palloc_dump(const char *path);

#ifdef __cplusplus
}
#endif

#endif /* PALLOC_H */
