/*-------------------------------------------------------------------------
 *
 * ff1.h
 *	  FF1 format-preserving encryption (NIST SP 800-38G) on AES, the block
 *	  cipher taken from OpenSSL's libcrypto: a general FF1 over numeral
 *	  strings, and the fast path of public IDs, FF1 over the 63 bits of a
 *	  snowflake ID (radix 2, 63 digits, no tweak).
 *
 * Nothing here touches PostgreSQL state (no palloc, no ereport, no GUCs):
 * only its types.  A key holds an OpenSSL cipher context, allocated by
 * libcrypto (malloc), which snowflake_ff1_key_free releases and wipes;
 * the caller decides where the key lives and when it is freed.
 *
 * The general FF1 covers every radix from 2 to 2^16 and every length from
 * 2 digits whose domain has at least a million values (radix^n >= 10^6,
 * Revision 1 of SP 800-38G), as long as the larger half of the string
 * holds at most 2^56 values (radix^ceil(n/2) <= 2^56): its arithmetic is
 * then 64-bit, on every platform.  NIST's samples (radix 10 with 10
 * digits, radix 36 with 19) and the 63-bit IDs (halves of 2^31 and 2^32)
 * are well inside.  Tweaks of any length up to 2^32 - 1 bytes.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_FF1_H
#define SNOWFLAKE_FF1_H

#include "layout.h"				/* SNOWFLAKE_INTERNAL */

/* Most digits the general FF1 takes: radix 2, halves of 56 digits. */
#define SNOWFLAKE_FF1_MAX_DIGITS	112

/* AES key lengths, in bytes: AES-128, AES-192, AES-256. */
#define SNOWFLAKE_FF1_KEY_MAX		32

/* OpenSSL's cipher context, declared without its headers. */
struct evp_cipher_ctx_st;

typedef struct SnowflakeFF1Key
{
	struct evp_cipher_ctx_st *ctx;	/* AES-ECB encryption under the key */
	uint8		id_mac[16];		/* CIPH_K(P) of the 63-bit binary case */
} SnowflakeFF1Key;

typedef enum SnowflakeFF1Status
{
	SNOWFLAKE_FF1_OK,
	SNOWFLAKE_FF1_BAD_KEY,		/* the key is not 16, 24 or 32 bytes */
	SNOWFLAKE_FF1_BAD_RADIX,	/* the radix is not between 2 and 2^16 */
	SNOWFLAKE_FF1_BAD_LENGTH,	/* fewer than 2 digits, or more than the
								 * maximum */
	SNOWFLAKE_FF1_BAD_DIGIT,	/* a digit is not below the radix */
	SNOWFLAKE_FF1_DOMAIN_SMALL, /* radix^n is below a million */
	SNOWFLAKE_FF1_DOMAIN_LARGE, /* radix^ceil(n/2) is above 2^56 */
	SNOWFLAKE_FF1_BAD_TWEAK,	/* the tweak is 2^32 bytes or longer */
	SNOWFLAKE_FF1_CRYPTO_FAILED /* libcrypto failed (out of memory) */
} SnowflakeFF1Status;

/*
 * snowflake_ff1_key_init
 *		Prepare an AES key of len bytes (16, 24 or 32).  On failure *key
 *		holds nothing to free.
 */
extern SNOWFLAKE_INTERNAL SnowflakeFF1Status snowflake_ff1_key_init(SnowflakeFF1Key *key,
																	const uint8 *bytes,
																	size_t len);

/* Release the key's cipher context and wipe what derives from the key. */
extern SNOWFLAKE_INTERNAL void snowflake_ff1_key_free(SnowflakeFF1Key *key);

/*
 * snowflake_ff1
 *		FF1.Encrypt (encrypt) or FF1.Decrypt of the n digits in[] in the
 *		radix, under the tweak, into out[] (which may be in[]).
 */
extern SNOWFLAKE_INTERNAL SnowflakeFF1Status snowflake_ff1(SnowflakeFF1Key *key,
														   bool encrypt,
														   uint32 radix,
														   const uint8 *tweak,
														   size_t tweak_len,
														   const uint16 *in,
														   int n,
														   uint16 *out);

/*
 * snowflake_ff1_id
 *		FF1 over 63 bits: the same as snowflake_ff1 with radix 2, the 63
 *		bits of x as its digits (most significant first) and no tweak, one
 *		AES block per round.  x must be below 2^63; so is *out.  False only
 *		when libcrypto fails.
 */
extern SNOWFLAKE_INTERNAL bool snowflake_ff1_id(SnowflakeFF1Key *key, bool encrypt,
												uint64 x, uint64 *out);

#endif							/* SNOWFLAKE_FF1_H */
