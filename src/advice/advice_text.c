// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The text every rule shares: sizes, the drops line, a new finding and
 * its setting; and where a sysctl takes effect (host-wide or per netns),
 * with the command that sets it there and the phrase that says so.
 */
#include <stdio.h>
#include <string.h>
#include "advice_internal.h"
#include "util.h"

/* ---- text helpers ------------------------------------------------------ */

const char *advice__bytes(char *buf, size_t len, uint64_t v)
{
	char h[32];

	if (v < 65536) {
		snprintf(buf, len, "%llu B", (unsigned long long)v);
		return buf;
	}
	fmt_bytes(h, sizeof(h), v);
	snprintf(buf, len, "%llu B (%s)", (unsigned long long)v, h);
	return buf;
}

/* "297 datagrams dropped over 3.00 s (99.0/s on average)" and the burst. */
void advice_drops_line(const struct advice_input *in, char *e, size_t len)
{
	add(e, len, "%s %s", N(in->drops), plural(in->drops, "datagram", "datagrams"));
	if (in->avg_size.known)
		add(e, len, " of ~%.0f B", in->avg_size.v);
	if (in->units > in->drops &&
	    (in->cause == CAUSE_FRAG_TIMEOUT || in->cause == CAUSE_FRAG_TOO_FAR))
		/* why the kernel's own counters say more (UD_KEY_REASM_UNIT) */
		add(e, len, " (the kernel counts %s failures: %s of them are datagrams counted as another "
		    "cause's, their first fragment dropped here)", N(in->units), N(in->units - in->drops));
	else if (in->units && in->units != in->drops)
		/* why the kernel's own counters say less */
		add(e, len, " (in %s skbs as the kernel counts them: a GSO/GRO skb carries several)",
		    N(in->units));
	else if (in->skbs != in->drops)
		add(e, len, " (%s skb events)", N(in->skbs));
	add(e, len, " dropped");
	if (in->span_s > 0)
		add(e, len, " over %s (%s on average)", S(in->span_s), R(in->drops / in->span_s));
	if (in->burst.known && in->burst.v && in->burst_s > 0) {
		const char *what = in->kernel_windows ? "window (the kernel's drop windows)"
				   : in->burst_window ? "window (per-drop events)"
				   : in->burst_episode ? "run of sample intervals with drops"
				   : in->live ? "refresh interval" : "snapshot interval";

		if (in->burst.v == in->drops)
			add(e, len, ", all of them in one %s %s (%s)", S(in->burst_s), what,
			    R(in->burst.v / in->burst_s));
		else
			add(e, len, ", at most %s in one %s %s (%s)", N(in->burst.v),
			    S(in->burst_s), what, R(in->burst.v / in->burst_s));
	}
	add(e, len, ". ");
}

void advice__port_taken(struct advice_input *in, int family, const uint8_t *laddr,
			uint16_t lport, const uint8_t *raddr, uint16_t rport, int pid,
			const char *comm)
{
	char l[64], r[64], c[16];
	size_t len = sizeof(in->port_taken);

	fmt_endpoint(l, sizeof(l), family, laddr, lport);
	in->port_taken[0] = '\0';
	add(in->port_taken, len, "%s", l);
	if (rport) {
		fmt_endpoint(r, sizeof(r), family, raddr, rport);
		add(in->port_taken, len, " connected to %s", r);
	}
	if (pid > 0) {
		snprintf(c, sizeof(c), "%s", comm ? comm : "");
		str_printable(c);
		add(in->port_taken, len, ", held by %d/%s", pid, c);
	}
}

/* The change's setting and value, for scripts (advice_finding). */
void advice_set_value(struct advice_finding *f, const char *setting, uint64_t v)
{
	snprintf(f->setting, sizeof(f->setting), "%s", setting);
	f->has_value = true;
	f->value = v;
}

struct advice_finding *advice_next(struct advice_finding *out, int max, int *n,
				   enum cause c)
{
	struct advice_finding *f;

	if (*n >= max)
		return NULL;
	f = &out[(*n)++];
	memset(f, 0, sizeof(*f));
	f->cause = c;
	f->secondary = *n > 1 && out[*n - 2].cause == c;
	return f;
}

/* ---- where a sysctl takes effect -------------------------------------- */

const char *advice__scope_name(enum advice_scope s)
{
	return s == ADVICE_SCOPE_HOST ? "host-wide" : s == ADVICE_SCOPE_NETNS ? "per-netns" : NULL;
}

const struct advice_sysctl_scope *advice__scope_of(const struct advice_where *w, const char *name)
{
	for (int i = 0; w && i < w->n && i < ADVICE_SCOPES; i++)
		if (w->s[i].name[0] && !strcmp(w->s[i].name, name))
			return &w->s[i];
	return NULL;
}

/* "NAME=VALUE", quoted for the shell when the value has spaces (udp_mem) */
static void sysctl_assign(char *buf, size_t len, const char *name, const char *value)
{
	snprintf(buf, len, strchr(value, ' ') ? "%s='%s'" : "%s=%s", name, value);
}

bool advice__sysctl_cmd(const struct advice_where *w, const char *name, const char *value,
			char *cmd, size_t len, bool *on_host)
{
	const struct advice_sysctl_scope *sc = advice__scope_of(w, name);
	char as[160];

	sysctl_assign(as, sizeof(as), name, value);
	*on_host = false;
	snprintf(cmd, len, "sysctl -w %s", as);
	if (!sc || sc->scope == ADVICE_SCOPE_UNKNOWN)
		return true; /* not tested: the plain command, as before */
	if (sc->scope == ADVICE_SCOPE_HOST) {
		/* one value for all: written in the initial netns, where
		 * udpdrop runs when the netns viewed can write it (it is
		 * the initial one), else on the host: entering another
		 * netns (nsenter -t 1 -n) does not help from a container,
		 * whose pid 1 is its own */
		*on_host = !sc->settable;
		return true;
	}
	/* per-netns: in the netns viewed */
	if (!sc->settable)
		return false;
	if (w->self)
		return true;
	if (!w->enter[0])
		return false;
	snprintf(cmd, len, "%ssysctl -w %s", w->enter, as);
	return true;
}

void advice__sysctl_phrase(const struct advice_where *w, const char *name, const char *value,
			   char *buf, size_t len)
{
	const struct advice_sysctl_scope *sc = advice__scope_of(w, name);
	char cmd[320], as[160];
	bool on_host, ok = advice__sysctl_cmd(w, name, value, cmd, sizeof(cmd), &on_host);

	sysctl_assign(as, sizeof(as), name, value);
	if (!sc || sc->scope == ADVICE_SCOPE_UNKNOWN) {
		add(buf, len, "%s", cmd);
		return;
	}
	if (sc->scope == ADVICE_SCOPE_HOST && on_host) {
		add(buf, len, "on the host (%s is host-wide: one value for every netns, read-only in "
		    "netns %s; no container can set it): %s", name, w->label, cmd);
		return;
	}
	if (sc->scope == ADVICE_SCOPE_HOST) {
		add(buf, len, "%s (host-wide: every netns gets it)", cmd);
		return;
	}
	if (ok)
		add(buf, len, "%s (per-netns: netns %s only", cmd, w->label);
	else if (sc->settable)
		add(buf, len, "in netns %s: %s (per-netns: that netns only", w->label, cmd);
	else
		add(buf, len, "in netns %s, where it is read-only from here: %s (per-netns", w->label,
		    cmd);
	if (!w->self || !ok)
		add(buf, len, "; for a container set it at its start: docker run --sysctl %s, or "
		    "Kubernetes securityContext.sysctls (an unsafe sysctl: the kubelet must allow it)",
		    as);
	add(buf, len, ")");
}

/*
 * The change's setting, a sysctl, and its value (for scripts), with its
 * scope and the command that applies it (value_text: the value as the
 * command writes it; NULL: v).
 */
void advice_set_sysctl(const struct advice_input *in, struct advice_finding *f, const char *name,
		       uint64_t v, const char *value_text)
{
	const struct advice_sysctl_scope *sc = advice__scope_of(in->where, name);
	char num[24];
	const char *sn = sc ? advice__scope_name(sc->scope) : NULL;

	advice_set_value(f, name, v);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)v);
	snprintf(f->setting_scope, sizeof(f->setting_scope), "%s", sn ? sn : "");
	if (!advice__sysctl_cmd(in->where, name, value_text ? value_text : num, f->setting_command,
				sizeof(f->setting_command), &f->setting_on_host))
		f->setting_command[0] = 0;
}

/* The phrase for sysctl `name` = v in the advice's text (advice__sysctl_phrase). */
void advice_add_sysctl(const struct advice_input *in, char *buf, size_t len, const char *name,
		       uint64_t v)
{
	char num[24];

	snprintf(num, sizeof(num), "%llu", (unsigned long long)v);
	advice__sysctl_phrase(in->where, name, num, buf, len);
}
