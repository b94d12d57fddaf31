/*-------------------------------------------------------------------------
 *
 * ff1.c
 *	  FF1 format-preserving encryption (NIST SP 800-38G, section 6.2) on
 *	  AES from OpenSSL's libcrypto (what the interface covers is in ff1.h).
 *
 * No PostgreSQL state is used here, only its types: the key's cipher
 * context is libcrypto's, allocated with its allocator, and nothing is
 * shared between processes or calls but the key the caller passes.
 *
 * FF1 is a ten-round Feistel network over the two halves A (u = n/2
 * digits) and B (v = n - u digits) of a numeral string.  Each round's
 * function is a CBC-MAC under AES of the block P (the radix, the lengths,
 * the tweak's length), then Q (the tweak, zeros, the round number i and
 * the number that B spells, in b bytes); its first d bytes, read as a
 * number, are added to A modulo radix^m (m = u in even rounds, v in odd
 * ones).  Since 1 + b <= 16, the round number and B always fall in Q's
 * last block: the CBC-MAC state after P and the rest of Q is computed once
 * per call (and, in the 63-bit case, once per key), and each round costs
 * one AES block.  Since d <= 16, S is that block's first d bytes: FF1's
 * further blocks CIPH_K(R xor [j]) are never needed within the domains
 * taken here (radix^v <= 2^56, so b <= 7 and d <= 12).
 *
 * The number S spells (up to 96 bits) is reduced modulo radix^m byte by
 * byte (Horner), each step below 2^64, so all arithmetic is 64-bit.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "ff1.h"

/* FF1's rounds. */
#define FF1_ROUNDS			10

/* The largest radix^v taken: 2^56, so that (x << 8) | byte fits in 64 bits. */
#define FF1_MAX_HALF		(UINT64CONST(1) << 56)

/* The smallest domain, radix^n (SP 800-38G Revision 1). */
#define FF1_MIN_DOMAIN		UINT64CONST(1000000)

/* What a call's rounds share. */
typedef struct Ff1Params
{
	uint32		radix;
	int			u;				/* digits of A */
	int			v;				/* digits of B */
	int			b;				/* bytes of NUM(B) in Q */
	int			d;				/* bytes of S read as y */
	uint64		ru;				/* radix^u */
	uint64		rv;				/* radix^v */
	size_t		fixed;			/* bytes of Q before its last block */
} Ff1Params;

/*
 * ff1_ciph
 *		One AES block under the key: out = CIPH_K(in).  ECB without
 *		padding: each block is encrypted alone, so the context keeps no
 *		state between calls.
 */
static inline bool
ff1_ciph(SnowflakeFF1Key *key, const uint8 *in, uint8 *out)
{
	int			outl = 0;

	return EVP_EncryptUpdate(key->ctx, out, &outl, in, 16) == 1 && outl == 16;
}

/* Write v as len big-endian bytes at out. */
static inline void
ff1_put_be(uint8 *out, int len, uint64 v)
{
	for (int k = len - 1; k >= 0; k--)
	{
		out[k] = (uint8) (v & 0xFF);
		v >>= 8;
	}
}

/*
 * ff1_p_block
 *		FF1's P: [1]^1 [2]^1 [1]^1 [radix]^3 [10]^1 [u mod 256]^1 [n]^4 [t]^4.
 */
static void
ff1_p_block(uint8 *p, uint32 radix, int u, int n, uint32 t)
{
	p[0] = 1;
	p[1] = 2;
	p[2] = 1;
	ff1_put_be(p + 3, 3, radix);
	p[6] = 10;
	p[7] = (uint8) (u % 256);
	ff1_put_be(p + 8, 4, (uint64) n);
	ff1_put_be(p + 12, 4, t);
}

SnowflakeFF1Status
snowflake_ff1_key_init(SnowflakeFF1Key *key, const uint8 *bytes, size_t len)
{
	const EVP_CIPHER *cipher;
	uint8		p[16];

	key->ctx = NULL;
	memset(key->id_mac, 0, sizeof(key->id_mac));
	switch (len)
	{
		case 16:
			cipher = EVP_aes_128_ecb();
			break;
		case 24:
			cipher = EVP_aes_192_ecb();
			break;
		case 32:
			cipher = EVP_aes_256_ecb();
			break;
		default:
			return SNOWFLAKE_FF1_BAD_KEY;
	}
	key->ctx = EVP_CIPHER_CTX_new();
	if (key->ctx == NULL)
		return SNOWFLAKE_FF1_CRYPTO_FAILED;
	ff1_p_block(p, 2, 31, 63, 0);
	if (EVP_EncryptInit_ex(key->ctx, cipher, NULL, bytes, NULL) != 1 ||
		EVP_CIPHER_CTX_set_padding(key->ctx, 0) != 1 ||
		!ff1_ciph(key, p, key->id_mac))
	{
		snowflake_ff1_key_free(key);
		return SNOWFLAKE_FF1_CRYPTO_FAILED;
	}
	return SNOWFLAKE_FF1_OK;
}

void
snowflake_ff1_key_free(SnowflakeFF1Key *key)
{
	/* Freeing the context wipes its key schedule (libcrypto's rule). */
	EVP_CIPHER_CTX_free(key->ctx);
	key->ctx = NULL;
	OPENSSL_cleanse(key->id_mac, sizeof(key->id_mac));
}

/*
 * ff1_bit_length
 *		How many bits x needs (0 for 0).
 */
static int
ff1_bit_length(uint64 x)
{
	int			bits = 0;

	while (x != 0)
	{
		bits++;
		x >>= 1;
	}
	return bits;
}

/*
 * ff1_params
 *		Check a call's arguments and derive what its rounds share.
 */
static SnowflakeFF1Status
ff1_params(uint32 radix, size_t t, const uint16 *in, int n, Ff1Params *p)
{
	if (radix < 2 || radix > 65536)
		return SNOWFLAKE_FF1_BAD_RADIX;
	if (n < 2 || n > SNOWFLAKE_FF1_MAX_DIGITS)
		return SNOWFLAKE_FF1_BAD_LENGTH;
	for (int k = 0; k < n; k++)
		if (in[k] >= radix)
			return SNOWFLAKE_FF1_BAD_DIGIT;
	if (t > PG_UINT32_MAX)
		return SNOWFLAKE_FF1_BAD_TWEAK;

	p->radix = radix;
	p->u = n / 2;
	p->v = n - p->u;
	p->ru = 1;
	p->rv = 1;
	for (int k = 0; k < p->v; k++)
	{
		if (p->rv > FF1_MAX_HALF / radix)
			return SNOWFLAKE_FF1_DOMAIN_LARGE;
		p->rv *= radix;
		if (k < p->u)
			p->ru *= radix;
	}
	/* radix^n = ru * rv, compared without overflow. */
	if (p->rv < FF1_MIN_DOMAIN && p->ru < (FF1_MIN_DOMAIN + p->rv - 1) / p->rv)
		return SNOWFLAKE_FF1_DOMAIN_SMALL;

	/* b = ceil(ceil(v log2 radix) / 8); ceil(log2 rv) is the bit length of rv - 1. */
	p->b = (ff1_bit_length(p->rv - 1) + 7) / 8;
	p->d = 4 * ((p->b + 3) / 4) + 4;
	/* Q = T || [0]^((-t-b-1) mod 16) || [i]^1 || [NUM(B)]^b */
	p->fixed = t + (16 - (t + p->b + 1) % 16) % 16 + 1 + p->b - 16;
	return SNOWFLAKE_FF1_OK;
}

/* Byte q of Q before [i] and NUM(B): the tweak, then zeros. */
static inline uint8
ff1_q_byte(const uint8 *tweak, size_t t, size_t q)
{
	return q < t ? tweak[q] : 0;
}

/*
 * ff1_mac_prefix
 *		The CBC-MAC state after P and the part of Q that no round changes
 *		(every block but the last).
 */
static bool
ff1_mac_prefix(SnowflakeFF1Key *key, const Ff1Params *p, const uint8 *tweak,
			   size_t t, uint8 *state)
{
	uint8		block[16];

	ff1_p_block(block, p->radix, p->u, p->u + p->v, (uint32) t);
	if (!ff1_ciph(key, block, state))
		return false;
	for (size_t off = 0; off < p->fixed; off += 16)
	{
		for (int j = 0; j < 16; j++)
			block[j] = state[j] ^ ff1_q_byte(tweak, t, off + j);
		if (!ff1_ciph(key, block, state))
			return false;
	}
	return true;
}

/*
 * ff1_round
 *		Round i's y = NUM(S), reduced modulo mod (radix^m), where num is
 *		the number of the half that goes into Q.
 */
static bool
ff1_round(SnowflakeFF1Key *key, const Ff1Params *p, const uint8 *state,
		  const uint8 *tweak, size_t t, int i, uint64 num, uint64 mod,
		  uint64 *y)
{
	uint8		block[16];
	uint8		r[16];
	uint8		last[16];
	uint64		acc = 0;

	for (int j = 0; j < 16; j++)
		last[j] = ff1_q_byte(tweak, t, p->fixed + j);
	last[15 - p->b] = (uint8) i;
	ff1_put_be(last + 16 - p->b, p->b, num);
	for (int j = 0; j < 16; j++)
		block[j] = state[j] ^ last[j];
	if (!ff1_ciph(key, block, r))
		return false;
	for (int k = 0; k < p->d; k++)
		acc = ((acc << 8) | r[k]) % mod;
	*y = acc;
	return true;
}

/* The number that len digits spell in the radix, most significant first. */
static uint64
ff1_num(const uint16 *digits, int len, uint32 radix)
{
	uint64		x = 0;

	for (int k = 0; k < len; k++)
		x = x * radix + digits[k];
	return x;
}

/* STR^len_radix(x): x as len digits. */
static void
ff1_str(uint64 x, int len, uint32 radix, uint16 *out)
{
	for (int k = len - 1; k >= 0; k--)
	{
		out[k] = (uint16) (x % radix);
		x /= radix;
	}
}

SnowflakeFF1Status
snowflake_ff1(SnowflakeFF1Key *key, bool encrypt, uint32 radix,
			  const uint8 *tweak, size_t tweak_len, const uint16 *in, int n,
			  uint16 *out)
{
	Ff1Params	p;
	SnowflakeFF1Status status;
	uint8		state[16];
	uint64		a;
	uint64		b;

	status = ff1_params(radix, tweak_len, in, n, &p);
	if (status != SNOWFLAKE_FF1_OK)
		return status;
	a = ff1_num(in, p.u, radix);
	b = ff1_num(in + p.u, p.v, radix);
	if (!ff1_mac_prefix(key, &p, tweak, tweak_len, state))
		return SNOWFLAKE_FF1_CRYPTO_FAILED;
	for (int k = 0; k < FF1_ROUNDS; k++)
	{
		int			i = encrypt ? k : FF1_ROUNDS - 1 - k;
		uint64		mod = (i % 2 == 0) ? p.ru : p.rv;
		uint64		y;
		uint64		c;

		if (!ff1_round(key, &p, state, tweak, tweak_len, i,
					   encrypt ? b : a, mod, &y))
			return SNOWFLAKE_FF1_CRYPTO_FAILED;
		if (encrypt)
		{
			c = (a + y) % mod;
			a = b;
			b = c;
		}
		else
		{
			c = (b + mod - y) % mod;
			b = a;
			a = c;
		}
	}
	ff1_str(a, p.u, radix, out);
	ff1_str(b, p.v, radix, out + p.u);
	explicit_bzero(state, sizeof(state));
	return SNOWFLAKE_FF1_OK;
}

/*
 * snowflake_ff1_id: FF1 with radix 2 and 63 digits, no tweak.  Then u = 31,
 * v = 32, b = 4, d = 8 and Q is one block, eleven zeros, i and B's four
 * bytes: the CBC-MAC state after P is the key's id_mac, and each round
 * encrypts id_mac xor Q.  y modulo 2^m is the low m bits of S's eight
 * bytes, and sums modulo 2^m are sums modulo 2^64 masked.
 */
bool
snowflake_ff1_id(SnowflakeFF1Key *key, bool encrypt, uint64 x, uint64 *out)
{
	uint64		a = x >> 32;	/* the 31 most significant bits */
	uint64		b = x & UINT64CONST(0xFFFFFFFF);
	uint8		block[16];
	uint8		r[16];

	for (int k = 0; k < FF1_ROUNDS; k++)
	{
		int			i = encrypt ? k : FF1_ROUNDS - 1 - k;
		uint64		mask = (i % 2 == 0) ? UINT64CONST(0x7FFFFFFF) : UINT64CONST(0xFFFFFFFF);
		uint64		num = encrypt ? b : a;
		uint64		y;

		memcpy(block, key->id_mac, 16);
		block[11] ^= (uint8) i;
		block[12] ^= (uint8) (num >> 24);
		block[13] ^= (uint8) (num >> 16);
		block[14] ^= (uint8) (num >> 8);
		block[15] ^= (uint8) num;
		if (!ff1_ciph(key, block, r))
			return false;
		y = 0;
		for (int j = 4; j < 8; j++)
			y = (y << 8) | r[j];
		if (encrypt)
		{
			uint64		c = (a + y) & mask;

			a = b;
			b = c;
		}
		else
		{
			uint64		c = (b - y) & mask;

			b = a;
			a = c;
		}
	}
	*out = (a << 32) | b;
	return true;
}
