/*-------------------------------------------------------------------------
 *
 * fuzz.h
 *	  What the fuzz targets of test/fuzz share: the check of a property,
 *	  which reports the failed property and aborts (libFuzzer then keeps
 *	  the input as a crash), and the reading of the fuzzer's bytes.
 *
 * Test only: never part of the extension.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_FUZZ_H
#define SNOWFLAKE_FUZZ_H

#include <stdio.h>
#include <stdlib.h>

int			LLVMFuzzerTestOneInput(const uint8 *data, size_t size);

/* A property of the code under test: abort, saying which, if it fails. */
#define FUZZ_CHECK(cond, ...) \
	do { \
		if (!(cond)) \
		{ \
			fprintf(stderr, "property failed at %s:%d: %s\n", \
					__FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
			abort(); \
		} \
	} while (0)

/*
 * The input as a C string in memory of its own, exactly as long as it
 * (the terminator after the last byte), so that AddressSanitizer sees a
 * read past it.  Bytes up to the first zero byte: a text argument never
 * holds one.  The caller frees it.
 */
static inline char *
fuzz_cstring(const uint8 *data, size_t size)
{
	size_t		len = strnlen((const char *) data, size);
	char	   *s = malloc(len + 1);

	memcpy(s, data, len);
	s[len] = '\0';
	return s;
}

/* n bytes of the input as an integer, little-endian; 0 past its end. */
static inline uint64
fuzz_take(const uint8 **data, size_t *size, int n)
{
	uint64		v = 0;

	for (int i = 0; i < n; i++)
	{
		if (*size > 0)
		{
			v |= (uint64) **data << (8 * i);
			(*data)++;
			(*size)--;
		}
	}
	return v;
}

/* Whether s[0 .. len) is well-formed UTF-8 (RFC 3629). */
static inline bool
fuzz_valid_utf8(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *) s;
	size_t		i = 0;

	while (i < len)
	{
		unsigned char c = p[i];
		int			n;
		uint32		cp;

		if (c < 0x80)
		{
			i++;
			continue;
		}
		else if (c >= 0xC2 && c <= 0xDF)
			n = 1, cp = c & 0x1F;
		else if (c >= 0xE0 && c <= 0xEF)
			n = 2, cp = c & 0x0F;
		else if (c >= 0xF0 && c <= 0xF4)
			n = 3, cp = c & 0x07;
		else
			return false;
		if (i + n >= len)
			return false;
		for (int k = 1; k <= n; k++)
		{
			if ((p[i + k] & 0xC0) != 0x80)
				return false;
			cp = (cp << 6) | (p[i + k] & 0x3F);
		}
		if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10FFFF)) ||
			(cp >= 0xD800 && cp <= 0xDFFF))
			return false;
		i += n + 1;
	}
	return true;
}

#endif							/* SNOWFLAKE_FUZZ_H */
