# Copyright: see LICENSE
#
# HostileTest.pm
#	What the hostile-objects tests (090 for the C extension, 091 for the
#	SQL edition) share: a role that plants, in a schema it may create in,
#	an object for every name a privileged role's script or function could
#	bind by accident, each of which logs who ran it and then returns the
#	right answer; and the checks that none ran and that nothing of the
#	extension is bound to one.
#
# What is planted is generated from the catalogs and from the scripts
# themselves, never listed by hand, so that a new operator or call in a
# script is covered without editing a test (the way PostgreSQL's own tests
# guard extension scripts, with an object for each thing a script might
# resolve through its search_path):
#  - an operator for each operator of pg_catalog and each argument type
#    that reaches it only through an implicit cast (one side at a time:
#    such an operator has more exactly matching arguments than
#    pg_catalog's, so it wins wherever the call's types are not exact,
#    pg_catalog first in the path or not), and for each polymorphic
#    operator one of each base type of pg_catalog (and each range type)
#    in place of its polymorphic arguments;
#  - a function for each function of pg_catalog whose name a script calls
#    without a schema (the scripts' text, scanned), in the same way: each
#    argument in turn of a type that casts to it implicitly, polymorphic
#    and variadic ones of each base type;
#  - with shadows, also a copy of each of those operators and functions
#    with pg_catalog's very signature: it wins wherever the schema comes
#    before pg_catalog in the search_path (a database's default
#    search_path of public, pg_catalog), where exact types do not help;
#  - where an install's own schema is one the planter may create in,
#    look-alikes of the functions it is about to create (from its script,
#    script_functions): each argument in turn of a type that casts to it
#    implicitly, or text, which an unknown literal prefers, polymorphic
#    ones of a few types: a call of the install's own function whose
#    arguments are not exactly its types would bind one instead.
# Each planted object is a PL/pgSQL function (and an operator over it)
# that raises a LOG line "HOSTILE: <what> ran as <role> (session <role>)"
# into the server log, which the tests read, then returns what
# pg_catalog's would (OPERATOR(pg_catalog.op), pg_catalog.f()); it is
# IMMUTABLE and not STRICT, so that it is run wherever it is bound,
# constants folded at planning included.  It logs once per session and
# role (a setting of the session marks it): a script that binds one in a
# query over the catalogs runs it for every row, and a line each time
# filled a disk (63 GB in one switch); PARALLEL RESTRICTED, since a
# parallel worker may set no setting (the leader runs it).

package HostileTest;

use strict;
use warnings;

use Exporter 'import';
use File::Basename ();
use File::Path ();
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

our @EXPORT = qw(hostile_roles hostile_database plant unqualified_calls
  hostile_mark hostile_ran foreign_bindings hq victim run_victim_file
  interface_calls installation_with script_functions plant_lookalikes);

# The planter's kit: functions of the planting role, in a schema of its
# own, that plant in a schema they are given (as that role).  Their own
# search_path is pg_catalog alone: planting runs nothing it planted.
my $kit = <<'EOT';
-- The type an expression has, found without running it (a temporary
-- view's column), or NULL if it does not resolve.
CREATE FUNCTION planter_kit.type_of(expr text) RETURNS regtype
LANGUAGE plpgsql SET search_path = pg_catalog AS $f$
DECLARE
    t regtype;
BEGIN
    EXECUTE 'CREATE TEMP VIEW planter_probe AS SELECT ' || expr || ' AS x';
    SELECT a.atttypid INTO t FROM pg_attribute a
     WHERE a.attrelid = 'pg_temp.planter_probe'::regclass AND a.attname = 'x';
    DROP VIEW pg_temp.planter_probe;
    RETURN t;
EXCEPTION WHEN OTHERS THEN
    RETURN NULL;
END $f$;

-- The base types of pg_catalog that polymorphic arguments are made of.
CREATE FUNCTION planter_kit.base_types() RETURNS TABLE (elem regtype, arr regtype)
LANGUAGE sql STABLE SET search_path = pg_catalog AS $f$
SELECT y.oid::regtype, y.typarray::regtype FROM pg_type y
 WHERE y.typnamespace = 'pg_catalog'::regnamespace AND y.typtype = 'b' AND y.typarray <> 0
   AND y.typisdefined AND y.typcategory <> 'A'
$f$;

-- A polymorphic type made concrete (NULL: a pseudo-type it cannot be).
CREATE FUNCTION planter_kit.concrete(t regtype, elem regtype, arr regtype, rng regtype, mr regtype)
RETURNS regtype LANGUAGE sql IMMUTABLE SET search_path = pg_catalog AS $f$
SELECT CASE WHEN t::text IN ('anyelement', 'anycompatible', 'anynonarray', '"any"') THEN elem
            WHEN t::text IN ('anyarray', 'anycompatiblearray') THEN arr
            WHEN t::text IN ('anyrange', 'anycompatiblerange') THEN rng
            WHEN t::text IN ('anymultirange', 'anycompatiblemultirange') THEN mr
            WHEN (SELECT y.typtype FROM pg_type y WHERE y.oid = t) = 'p' THEN NULL
            ELSE t END
$f$;

-- One logging PL/pgSQL function: target.fname(args) calling call, whose
-- arguments are a1, a2, ...
CREATE FUNCTION planter_kit.plant_one(target name, fname text, what text, args regtype[], res regtype,
                                      is_set bool, body text)
RETURNS bool LANGUAGE plpgsql SET search_path = pg_catalog AS $f$
DECLARE
    decl text := '';
BEGIN
    FOR i IN 1 .. coalesce(cardinality(args), 0) LOOP
        decl := decl || CASE WHEN i > 1 THEN ', ' ELSE '' END || 'a' || i || ' ' || args[i];
    END LOOP;
    -- (Its body names nothing through the search_path: it runs under the
    -- caller's, where the planted objects are.)
    EXECUTE format($q$CREATE FUNCTION %I.%I(%s) RETURNS %s%s LANGUAGE plpgsql IMMUTABLE PARALLEL RESTRICTED AS %L$q$,
        target, fname, decl, CASE WHEN is_set THEN 'SETOF ' ELSE '' END, res,
        format($b$DECLARE
    seen pg_catalog.text := pg_catalog.concat('hostile.r', pg_catalog.md5(pg_catalog.concat(%L, current_user)));
BEGIN
    IF pg_catalog.current_setting(seen, true) IS NULL THEN
        RAISE LOG %L, current_user, session_user;
        PERFORM pg_catalog.set_config(seen, 'ran', false);
    END IF;
    %s %s;
END$b$,
               what, 'HOSTILE: ' || replace(what, '%', '%%') || ' ran as % (session %)',
               CASE WHEN is_set THEN 'RETURN QUERY SELECT * FROM' ELSE 'RETURN' END, body));
    RETURN true;
EXCEPTION WHEN duplicate_function THEN
    RETURN false;
END $f$;

-- The operators (see HostileTest.pm).
CREATE FUNCTION planter_kit.plant_operators(target name, shadows bool) RETURNS int
LANGUAGE plpgsql SET search_path = pg_catalog AS $f$
DECLARE
    rec record;
    t record;
    v_l regtype;
    v_r regtype;
    v_res regtype;
    n int := 0;
BEGIN
    CREATE TEMP TABLE planter_ops (op text, l regtype, r regtype, cl regtype, cr regtype, res regtype,
                                   UNIQUE NULLS NOT DISTINCT (op, l, r)) ON COMMIT DROP;
    -- Each side in turn of a type that casts to it implicitly.
    INSERT INTO planter_ops
    SELECT o.oprname, s.castsource::regtype, o.oprright::regtype, o.oprleft::regtype, o.oprright::regtype,
           o.oprresult::regtype
      FROM pg_operator o JOIN pg_cast s ON s.casttarget = o.oprleft AND s.castcontext = 'i'
     WHERE o.oprnamespace = 'pg_catalog'::regnamespace AND o.oprleft <> 0
       AND NOT EXISTS (SELECT FROM pg_type y WHERE y.oid IN (o.oprleft, o.oprright, o.oprresult) AND y.typtype = 'p')
    ON CONFLICT DO NOTHING;
    INSERT INTO planter_ops
    SELECT o.oprname, nullif(o.oprleft, 0)::regtype, s.castsource::regtype, nullif(o.oprleft, 0)::regtype,
           o.oprright::regtype, o.oprresult::regtype
      FROM pg_operator o JOIN pg_cast s ON s.casttarget = o.oprright AND s.castcontext = 'i'
     WHERE o.oprnamespace = 'pg_catalog'::regnamespace
       AND NOT EXISTS (SELECT FROM pg_type y WHERE y.oid IN (o.oprleft, o.oprright, o.oprresult) AND y.typtype = 'p')
    ON CONFLICT DO NOTHING;
    -- Polymorphic ones of each base type and each range type.
    FOR rec IN SELECT o.oprname, o.oprleft::regtype AS l, o.oprright::regtype AS r FROM pg_operator o
                WHERE o.oprnamespace = 'pg_catalog'::regnamespace
                  AND EXISTS (SELECT FROM pg_type y WHERE y.oid IN (o.oprleft, o.oprright) AND y.typtype = 'p')
    LOOP
        FOR t IN SELECT b.elem, b.arr, NULL::regtype AS rng, NULL::regtype AS mr FROM planter_kit.base_types() b
                 UNION ALL
                 SELECT g.rngsubtype::regtype, NULL, g.rngtypid::regtype, g.rngmultitypid::regtype FROM pg_range g
        LOOP
            v_l := planter_kit.concrete(rec.l, t.elem, t.arr, t.rng, t.mr);
            v_r := planter_kit.concrete(rec.r, t.elem, t.arr, t.rng, t.mr);
            CONTINUE WHEN v_l IS NULL OR v_r IS NULL
                OR EXISTS (SELECT FROM planter_ops c WHERE c.op = rec.oprname AND c.l = v_l AND c.r = v_r);
            v_res := planter_kit.type_of(format('NULL::%s OPERATOR(pg_catalog.%s) NULL::%s', v_l, rec.oprname, v_r));
            CONTINUE WHEN v_res IS NULL;
            INSERT INTO planter_ops VALUES (rec.oprname, v_l, v_r, NULL, NULL, v_res);
        END LOOP;
    END LOOP;
    -- What pg_catalog has with these very types: a shadow.
    DELETE FROM planter_ops c USING pg_operator x
     WHERE x.oprnamespace = 'pg_catalog'::regnamespace AND x.oprname = c.op
       AND x.oprleft = coalesce(c.l, 0) AND x.oprright = c.r;
    IF shadows THEN
        INSERT INTO planter_ops
        SELECT o.oprname, nullif(o.oprleft, 0)::regtype, o.oprright::regtype, NULL, NULL, o.oprresult::regtype
          FROM pg_operator o
         WHERE o.oprnamespace = 'pg_catalog'::regnamespace
           AND NOT EXISTS (SELECT FROM pg_type y WHERE y.oid IN (o.oprleft, o.oprright, o.oprresult) AND y.typtype = 'p');
    END IF;
    FOR rec IN SELECT * FROM planter_ops ORDER BY op, l, r LOOP
        n := n + 1;
        PERFORM planter_kit.plant_one(target, 'hostile_op_' || n,
            format('operator %s(%s,%s) in schema %s', rec.op, coalesce(rec.l::text, 'NONE'), rec.r, target),
            CASE WHEN rec.l IS NULL THEN ARRAY[rec.r] ELSE ARRAY[rec.l, rec.r] END, rec.res, false,
            format('%s OPERATOR(pg_catalog.%s) %s',
                   CASE WHEN rec.l IS NULL THEN '' ELSE 'a1' || coalesce('::' || rec.cl, '') END, rec.op,
                   CASE WHEN rec.l IS NULL THEN 'a1' ELSE 'a2' END || coalesce('::' || rec.cr, '')));
        EXECUTE format('CREATE OPERATOR %I.%s (%s RIGHTARG = %s, FUNCTION = %I.%I)', target, rec.op,
            CASE WHEN rec.l IS NULL THEN '' ELSE 'LEFTARG = ' || rec.l || ',' END, rec.r,
            target, 'hostile_op_' || n);
    END LOOP;
    RETURN n;
END $f$;

-- Look-alikes of the functions an install is about to create in target
-- (see HostileTest.pm): sigs holds one line per function, "name|type,
-- type,...|result type"; each argument in turn of a type that casts to it
-- implicitly, or text (which an unknown literal prefers), polymorphic
-- ones of a few types; never a signature the install has itself.
CREATE FUNCTION planter_kit.plant_lookalikes(target name, sigs text) RETURNS int
LANGUAGE plpgsql SET search_path = pg_catalog AS $f$
DECLARE
    line text;
    parts text[];
    args regtype[];
    alt regtype[];
    res regtype;
    s record;
    t regtype;
    own text[] := '{}';
    n int := 0;
BEGIN
    FOREACH line IN ARRAY string_to_array(sigs, E'\n') LOOP
        parts := string_to_array(line, '|');
        own := own || (parts[1] || '(' || CASE WHEN parts[2] = '' THEN ''
                                              ELSE array_to_string(string_to_array(parts[2], ',')::regtype[], ',') END || ')');
    END LOOP;
    CREATE TEMP TABLE planter_look (fname name, args regtype[], res regtype, UNIQUE (fname, args)) ON COMMIT DROP;
    FOREACH line IN ARRAY string_to_array(sigs, E'\n') LOOP
        parts := string_to_array(line, '|');
        args := CASE WHEN parts[2] = '' THEN '{}' ELSE string_to_array(parts[2], ',')::regtype[] END;
        res := parts[3]::regtype;
        FOR i IN 1 .. cardinality(args) LOOP
            IF (SELECT y.typtype FROM pg_type y WHERE y.oid = args[i]) = 'p' THEN
                FOREACH t IN ARRAY '{int2,int4,int8,text,bool,bytea,timestamptz,numeric,float8,jsonb}'::regtype[] LOOP
                    alt := args;
                    alt[i] := t;
                    INSERT INTO planter_look VALUES (parts[1], alt, CASE WHEN res = args[i] THEN t ELSE res END)
                    ON CONFLICT DO NOTHING;
                END LOOP;
                CONTINUE;
            END IF;
            FOR s IN SELECT c.castsource::regtype AS src FROM pg_cast c
                      WHERE c.casttarget = args[i] AND c.castcontext = 'i' AND c.castsource <> c.casttarget
                     UNION SELECT 'text'::regtype WHERE args[i] <> 'text'::regtype LOOP
                alt := args;
                alt[i] := s.src;
                INSERT INTO planter_look VALUES (parts[1], alt, res) ON CONFLICT DO NOTHING;
            END LOOP;
        END LOOP;
    END LOOP;
    FOR s IN SELECT * FROM planter_look l
              WHERE NOT (l.fname || '(' || array_to_string(l.args, ',') || ')') = ANY (own)
                AND (SELECT y.typtype FROM pg_type y WHERE y.oid = l.res) <> 'p'
                AND NOT EXISTS (SELECT FROM unnest(l.args) a JOIN pg_type y ON y.oid = a WHERE y.typtype = 'p')
              ORDER BY 1, 2::text LOOP
        IF planter_kit.plant_one(target, s.fname,
               format('look-alike %s(%s) in schema %s', s.fname, array_to_string(s.args, ','), target),
               s.args, s.res, false, 'NULL') THEN
            n := n + 1;
        END IF;
    END LOOP;
    RETURN n;
END $f$;

-- The functions of pg_catalog of the names given (see HostileTest.pm).
CREATE FUNCTION planter_kit.plant_functions(target name, names text[], shadows bool) RETURNS int
LANGUAGE plpgsql SET search_path = pg_catalog AS $f$
DECLARE
    p record;
    t record;
    s record;
    alt regtype[];
    v_res regtype;
    n int := 0;
BEGIN
    CREATE TEMP TABLE planter_fns (fname name, args regtype[], orig regtype[], res regtype, is_set bool,
                                   UNIQUE (fname, args)) ON COMMIT DROP;
    FOR p IN SELECT f.proname, f.prorettype::regtype AS res, f.proretset, f.provariadic::regtype AS variadic,
                    coalesce((SELECT array_agg(a::regtype ORDER BY o)
                                FROM unnest(f.proargtypes::oid[]) WITH ORDINALITY u(a, o)), '{}') AS args,
                    EXISTS (SELECT FROM unnest(f.proargtypes::oid[]) a JOIN pg_type y ON y.oid = a
                             WHERE y.typtype = 'p') AS poly
               FROM pg_proc f
              WHERE f.pronamespace = 'pg_catalog'::regnamespace AND f.prokind = 'f' AND f.proname = ANY (names)
                AND NOT coalesce(f.proargmodes::text[] && '{o,b,t}', false)
    LOOP
        IF p.variadic <> 0 THEN
            -- One and two arguments in the variadic part, of its element
            -- type, or of each base type for "any".
            CONTINUE WHEN p.proretset;
            FOR t IN SELECT b.elem FROM planter_kit.base_types() b WHERE p.variadic::text = '"any"'
                     UNION ALL SELECT p.variadic WHERE p.variadic::text <> '"any"'
            LOOP
                FOR k IN 1 .. 2 LOOP
                    alt := p.args[1:cardinality(p.args) - 1] || array_fill(t.elem, ARRAY[k]);
                    CONTINUE WHEN EXISTS (SELECT FROM unnest(alt) a JOIN pg_type y ON y.oid = a WHERE y.typtype = 'p');
                    v_res := planter_kit.type_of(format('pg_catalog.%I(%s)', p.proname,
                                                        (SELECT string_agg('NULL::' || a::text, ', ') FROM unnest(alt) a)));
                    CONTINUE WHEN v_res IS NULL;
                    INSERT INTO planter_fns VALUES (p.proname, alt, NULL, v_res, false) ON CONFLICT DO NOTHING;
                END LOOP;
            END LOOP;
        ELSIF p.poly THEN
            CONTINUE WHEN p.proretset;
            FOR t IN SELECT * FROM planter_kit.base_types() LOOP
                alt := ARRAY(SELECT planter_kit.concrete(a, t.elem, t.arr, NULL, NULL) FROM unnest(p.args) a);
                CONTINUE WHEN array_position(alt, NULL) IS NOT NULL;
                v_res := planter_kit.type_of(format('pg_catalog.%I(%s)', p.proname,
                                                    (SELECT string_agg('NULL::' || a::text, ', ') FROM unnest(alt) a)));
                CONTINUE WHEN v_res IS NULL;
                INSERT INTO planter_fns VALUES (p.proname, alt, NULL, v_res, false) ON CONFLICT DO NOTHING;
            END LOOP;
        ELSE
            CONTINUE WHEN EXISTS (SELECT FROM pg_type y WHERE y.oid = p.res AND y.typtype = 'p');
            IF shadows THEN
                INSERT INTO planter_fns VALUES (p.proname, p.args, p.args, p.res, p.proretset) ON CONFLICT DO NOTHING;
            END IF;
            FOR i IN 1 .. cardinality(p.args) LOOP
                FOR s IN SELECT c.castsource::regtype AS src FROM pg_cast c
                          WHERE c.casttarget = p.args[i] AND c.castcontext = 'i' LOOP
                    alt := p.args;
                    alt[i] := s.src;
                    INSERT INTO planter_fns VALUES (p.proname, alt, p.args, p.res, p.proretset) ON CONFLICT DO NOTHING;
                END LOOP;
            END LOOP;
        END IF;
    END LOOP;
    -- What pg_catalog has with these very types is a shadow.
    DELETE FROM planter_fns c USING pg_proc x
     WHERE NOT (shadows AND c.orig IS NOT NULL AND c.orig = c.args)
       AND x.pronamespace = 'pg_catalog'::regnamespace AND x.proname = c.fname
       AND array_to_string(x.proargtypes::oid[], ',') = array_to_string(c.args::oid[], ',');
    FOR p IN SELECT * FROM planter_fns ORDER BY fname, args::text LOOP
        IF planter_kit.plant_one(target, p.fname,
               format('function %s(%s) in schema %s', p.fname, array_to_string(p.args, ','), target),
               p.args, p.res, p.is_set,
               format('pg_catalog.%I(%s)', p.fname,
                      (SELECT string_agg('a' || o || coalesce('::' || p.orig[o], ''), ', ' ORDER BY o)
                         FROM generate_subscripts(p.args, 1) o))) THEN
            n := n + 1;
        END IF;
    END LOOP;
    RETURN n;
END $f$;
EOT

# The roles of the tests: the planter (an ordinary role that creates its
# objects where it may), the owner of what is installed (not a superuser)
# and an application role.
sub hostile_roles
{
	my ($node) = @_;
	$node->safe_psql('postgres',
		'CREATE ROLE planter LOGIN; CREATE ROLE owner_role LOGIN; CREATE ROLE app_user LOGIN');
	return;
}

# The psql of the tests themselves: every query of theirs runs with
# search_path = pg_catalog, so that none runs a planted object.
sub hq
{
	my ($node, $db, $sql, %opts) = @_;
	return $node->safe_psql($db, $sql,
		connstr => $node->connstr($db) . q{ options='-csearch_path=pg_catalog'}, %opts);
}

# A database owned by $owner where, as in a database created before
# PostgreSQL 15, every role may create in public, whose default
# search_path is public, pg_catalog (as a database owner may set it), with
# the planter's kit, made from $template when given (the planted objects,
# which a template carries, come with it; the settings of a database do
# not, and are set here).
sub hostile_database
{
	my ($node, $db, %opts) = @_;
	my $owner = $opts{owner} // 'owner_role';
	hq($node, 'postgres', "CREATE DATABASE $db OWNER $owner"
		  . ($opts{template} ? " TEMPLATE $opts{template}" : ''));
	hq($node, 'postgres', "ALTER DATABASE $db SET search_path = public, pg_catalog");
	return if $opts{template};
	hq($node, $db, 'GRANT CREATE ON SCHEMA public TO PUBLIC; CREATE SCHEMA planter_kit AUTHORIZATION planter');
	hq($node, $db, "SET ROLE planter; $kit");
	return;
}

# Plant, as the planter, in schema $schema of database $db: operators
# (with shadows when asked), and functions of the names @$names.  Returns
# how many of each.
sub plant
{
	my ($node, $db, $schema, %opts) = @_;
	my $shadows = $opts{shadows} ? 'true' : 'false';
	my $names = join(',', map { qq{"$_"} } @{ $opts{names} // [] });
	my $ops = hq($node, $db, "SELECT planter_kit.plant_operators('$schema', $shadows)",
		extra_params => [ '-U', 'planter' ]);
	my $fns = hq($node, $db, "SELECT planter_kit.plant_functions('$schema', '{$names}', $shadows)",
		extra_params => [ '-U', 'planter' ]);
	return ($ops, $fns);
}

# The names of the functions that the files @files call without a schema
# (an identifier followed by "(" and not by a schema's "."), lower case.
# Words of SQL that take parentheses are names too, if pg_catalog has a
# function of that name: planting one more changes nothing.
sub unqualified_calls
{
	my (@files) = @_;
	my %names;
	foreach my $file (@files)
	{
		my $text = slurp_file($file);
		while ($text =~ /(?<![.\w"\$])([A-Za-z_][A-Za-z0-9_]*)\s*\(/g)
		{
			$names{ lc $1 } = 1;
		}
	}
	return [ sort keys %names ];
}

# The functions that the script $file creates in @extschema@, as
# "name|type,...|result" lines of pg_catalog's types (qualified or not); a
# function with an argument or result of a type of the script's own is
# left out, unless $schema is given: the schema the script was run with,
# whose types are then written with it.
sub script_functions
{
	my ($file, $schema) = @_;
	my $text = slurp_file($file);
	$text =~ s/\@extschema\@\.(?=_snowflake_layout\b)/$schema./g if defined $schema;
	my $qual = '\@extschema\@';
	my @out;
	while ($text =~ /CREATE (?:OR REPLACE )?FUNCTION $qual\.(\w+)\(/g)
	{
		my ($name, $start) = ($1, pos($text));
		my ($depth, $i) = (1, $start);
		for (; $i < length $text && $depth > 0; $i++)
		{
			my $c = substr($text, $i, 1);
			$depth++ if $c eq '(';
			$depth-- if $c eq ')';
		}
		my $list = substr($text, $start, $i - 1 - $start);
		my ($result) = substr($text, $i) =~ /\A\s*RETURNS\s+(?:SETOF\s+)?([^\s]+)/;
		my @types;
		my $skip = 0;
		foreach my $arg (split /,(?![^(]*\))/, $list)
		{
			$arg =~ s/\s+DEFAULT\s.*//is;
			my @words = split ' ', $arg;
			next unless @words;
			next if $words[0] =~ /^OUT$/i;
			shift @words if $words[0] =~ /^(?:IN|INOUT|VARIADIC)$/i;
			my $type = $words[-1];
			$skip = 1 if $type =~ /\@/ || ($type =~ /\./ && $type !~ /^pg_catalog\./
				&& !(defined $schema && $type =~ /^\Q$schema\E\./));
			push @types, $type;
		}
		$skip = 1 if !defined $result || $result =~ /\@/ || ($result =~ /\./ && $result !~ /^pg_catalog\./
			&& !(defined $schema && $result =~ /^\Q$schema\E\./));
		push @out, "$name|" . join(',', @types) . "|$result" unless $skip;
	}
	return @out;
}

# Plant, as the planter, in schema $schema of database $db, look-alikes
# of the functions @$sigs (script_functions' lines).  Returns how many.
sub plant_lookalikes
{
	my ($node, $db, $schema, $sigs) = @_;
	(my $text = join("\n", @$sigs)) =~ s/'/''/g;
	return hq($node, $db, "SELECT planter_kit.plant_lookalikes('$schema', '$text')",
		extra_params => [ '-U', 'planter' ]);
}

# Where the server log is now.
sub hostile_mark
{
	my ($node) = @_;
	return -s $node->logfile;
}

# The planted objects that ran since $mark: their LOG lines, each once,
# joined (empty when none ran), at most 40 of them and then how many lines
# there were in all.  A backend writes its log line before its client sees
# the statement end.  Read a line at a time: a script that binds a planted
# operator in a query over the catalogs runs it for every row, and logs a
# line each time.
sub hostile_ran
{
	my ($node, $mark) = @_;
	my (%seen, @distinct);
	my $lines = 0;
	open my $fh, '<', $node->logfile or die $node->logfile . ": $!";
	seek($fh, $mark, 0) or die "seek: $!";
	while (my $line = <$fh>)
	{
		next unless $line =~ /(HOSTILE: [^\n]*)/;
		$lines++;
		push @distinct, $1 if !$seen{$1}++ && @distinct < 40;
	}
	close $fh;
	push @distinct, "($lines lines in all)" if $lines > @distinct;
	return join("\n", @distinct);
}

# What the objects in the schemas @$schemas (functions, views' rules,
# column defaults, constraints, indexes) are bound to outside pg_catalog,
# those schemas and the extensions named in @$allowed (pgcrypto, whose
# encrypt() the edition binds on purpose), or to an object of the
# planter's wherever it is, from pg_depend: one line each, empty when
# none.
sub foreign_bindings
{
	my ($node, $db, $schemas, $allowed) = @_;
	my $own = join(',', map { qq{"$_"} } @$schemas);
	my $ext = join(',', map { qq{"$_"} } @{ $allowed // [] });
	return hq(
		$node, $db, qq{
WITH own AS (SELECT oid FROM pg_namespace WHERE nspname = ANY ('{$own}')),
objs AS (
    SELECT 'pg_proc'::regclass AS classid, p.oid AS objid FROM pg_proc p WHERE p.pronamespace IN (SELECT oid FROM own)
    UNION ALL
    SELECT 'pg_rewrite'::regclass, r.oid FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class
     WHERE c.relnamespace IN (SELECT oid FROM own)
    UNION ALL
    SELECT 'pg_attrdef'::regclass, a.oid FROM pg_attrdef a JOIN pg_class c ON c.oid = a.adrelid
     WHERE c.relnamespace IN (SELECT oid FROM own)
    UNION ALL
    SELECT 'pg_constraint'::regclass, k.oid FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
     WHERE c.relnamespace IN (SELECT oid FROM own)
    UNION ALL
    SELECT 'pg_class'::regclass, c.oid FROM pg_class c WHERE c.relnamespace IN (SELECT oid FROM own)
),
refs AS (
    SELECT d.classid, d.objid, d.refclassid, d.refobjid,
           CASE d.refclassid
               WHEN 'pg_proc'::regclass THEN (SELECT x.pronamespace FROM pg_proc x WHERE x.oid = d.refobjid)
               WHEN 'pg_operator'::regclass THEN (SELECT x.oprnamespace FROM pg_operator x WHERE x.oid = d.refobjid)
               WHEN 'pg_type'::regclass THEN (SELECT x.typnamespace FROM pg_type x WHERE x.oid = d.refobjid)
               WHEN 'pg_class'::regclass THEN (SELECT x.relnamespace FROM pg_class x WHERE x.oid = d.refobjid)
               WHEN 'pg_collation'::regclass THEN (SELECT x.collnamespace FROM pg_collation x WHERE x.oid = d.refobjid)
               WHEN 'pg_opclass'::regclass THEN (SELECT x.opcnamespace FROM pg_opclass x WHERE x.oid = d.refobjid)
               WHEN 'pg_opfamily'::regclass THEN (SELECT x.opfnamespace FROM pg_opfamily x WHERE x.oid = d.refobjid)
               WHEN 'pg_namespace'::regclass THEN d.refobjid
           END AS nsp,
           CASE d.refclassid
               WHEN 'pg_proc'::regclass THEN (SELECT x.proowner FROM pg_proc x WHERE x.oid = d.refobjid)
               WHEN 'pg_operator'::regclass THEN (SELECT x.oprowner FROM pg_operator x WHERE x.oid = d.refobjid)
               WHEN 'pg_type'::regclass THEN (SELECT x.typowner FROM pg_type x WHERE x.oid = d.refobjid)
               WHEN 'pg_class'::regclass THEN (SELECT x.relowner FROM pg_class x WHERE x.oid = d.refobjid)
           END AS owner
      FROM pg_depend d JOIN objs o ON o.classid = d.classid AND o.objid = d.objid
     WHERE d.deptype IN ('n', 'a')
)
SELECT string_agg(DISTINCT pg_describe_object(classid, objid, 0) || ' -> ' || pg_describe_object(refclassid, refobjid, 0),
                  E'\\n')
  FROM refs
 WHERE (nsp IS NOT NULL AND nsp <> 'pg_catalog'::regnamespace AND nsp NOT IN (SELECT oid FROM own)
        OR owner = 'planter'::regrole)
   AND NOT EXISTS (SELECT FROM pg_depend e JOIN pg_extension x ON x.oid = e.refobjid
                    WHERE e.classid = refs.refclassid AND e.objid = refs.refobjid AND e.deptype = 'e'
                      AND x.extname = ANY ('{$ext}'))});
}

# Run $sql in $db as $role (a superuser when undef) with the database's
# default search_path, as a privileged role would: (ok, stdout, stderr).
sub victim
{
	my ($node, $db, $role, $sql) = @_;
	my ($ret, $out, $err) = $node->psql($db, $sql, on_error_stop => 1,
		defined $role ? (extra_params => [ '-U', $role ]) : ());
	return ($ret == 0, $out, $err);
}

# Run the script file $file with psql in $db as $role (a superuser when
# undef), stopping at its first error, after the commands @$before:
# (ok, stdout, stderr).
sub run_victim_file
{
	my ($node, $db, $role, $file, $before) = @_;
	my ($out, $err) = ('', '');
	my $ok = IPC::Run::run(
		[
			'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d',
			$node->connstr($db) . (defined $role ? " user=$role" : ''),
			(map { ('-c', $_) } @{ $before // [] }),
			'-f', $file
		],
		'>', \$out, '2>', \$err);
	return ($ok ? 1 : 0, $out, $err);
}

# The SQL calling every function of the interface in $schema of $db (those
# named snowflake_..., that are not the planter's and return no trigger):
# for each, a call that succeeds given the right role and state, and the
# calls of its errors, generated from each function's arguments (a
# function with an argument no rule knows fails the test: give it a rule).
# snowflake_nextval() comes first (snowflake_lastval() needs a key handed
# out); snowflake_convert_column() converts $schema.hostile_keyed.id (a
# dry run).
sub interface_calls
{
	my ($node, $db, $schema) = @_;
	my (@good, @bad);
	my $key = q{'\x000102030405060708090a0b0c0d0e0f'::pg_catalog.bytea};
	foreach my $row (split /\n/, hq($node, $db, qq{
SELECT p.proname, coalesce(array_to_string(p.proargnames, ','), ''),
       coalesce((SELECT string_agg(format_type(t, NULL), ',' ORDER BY o)
                   FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY u(t, o)), '')
  FROM pg_proc p
 WHERE p.pronamespace = '$schema'::regnamespace AND p.proname LIKE 'snowflake\\_%'
   AND p.proowner <> 'planter'::regrole AND p.prorettype <> 'trigger'::regtype
 ORDER BY 1, 2, 3}))
	{
		my ($name, $argnames, $types) = split /\|/, $row, -1;
		my @names = split /,/, $argnames;
		my @types = split /,/, $types;
		my (@args, @errors);
		for my $i (0 .. $#types)
		{
			my ($n, $t) = ($names[$i] // '', $types[$i]);
			my $arg;
			if ($t eq 'bigint' && ($n eq 'id' || $n eq 'public_id'))
			{
				$arg = '382958333860159488::pg_catalog.int8';
				push @errors, [ $i, '(-1)::pg_catalog.int8' ];
			}
			elsif ($t eq 'text' && $n eq 'layout')
			{
				$arg = q{'twitter'::pg_catalog.text};
				push @errors, [ $i, q{'epoch=2015-01-01; fields=timestamp:42,w:10,sequence:12'::pg_catalog.text} ],
				  [ $i, q{'epoch=now; fields=timestamp:41'::pg_catalog.text} ],
				  [ $i, q{'epoch=2015-13-45; fields=timestamp:41,sequence:12'::pg_catalog.text} ];
			}
			elsif ($t eq 'timestamp with time zone' && $n eq 'ts')
			{
				$arg = q{'2025-06-01 12:00:00+00'::pg_catalog.timestamptz};
				push @errors, [ $i, q{'1900-01-01 00:00:00+00'::pg_catalog.timestamptz} ];
			}
			elsif ($t eq 'integer' && $n eq 'node_id')
			{
				$arg = $name eq 'snowflake_set_node_id' ? '17::pg_catalog.int4' : '1::pg_catalog.int4';
				push @errors, [ $i, '5000::pg_catalog.int4' ];
			}
			elsif ($t eq 'integer' && $n eq 'sequence')
			{
				$arg = '2::pg_catalog.int4';
				push @errors, [ $i, '(-2)::pg_catalog.int4' ];
			}
			elsif ($t eq 'integer' && $n eq 'count')
			{
				$arg = '3::pg_catalog.int4';
				push @errors, [ $i, '0::pg_catalog.int4' ];
			}
			elsif ($t eq 'integer' && $n eq 'key_id')
			{
				$arg = '1::pg_catalog.int4';
				push @errors, [ $i, '9::pg_catalog.int4' ], [ $i, '40::pg_catalog.int4' ];
			}
			elsif ($t eq 'text' && $n eq 'prefix')
			{
				$arg = q{'ord_'::pg_catalog.text};
				push @errors, [ $i, q{'bad prefix'::pg_catalog.text} ];
			}
			elsif ($t eq 'bytea' && $n eq 'key')
			{
				$arg = $key;
				push @errors, [ $i, q{'\x00'::pg_catalog.bytea} ];
			}
			elsif ($t eq 'boolean' && ($n eq 'current' || $n eq 'dry_run'))
			{
				$arg = 'true';
			}
			elsif ($t eq 'boolean' && $n eq 'force')
			{
				$arg = 'false';
			}
			elsif ($t eq 'regclass' && $n eq 'tbl')
			{
				$arg = "'$schema.hostile_keyed'::pg_catalog.regclass";
				push @errors, [ $i, q{'pg_catalog.pg_class'::pg_catalog.regclass} ];
			}
			elsif ($t eq 'name' && $n eq 'col')
			{
				$arg = q{'id'::pg_catalog.name};
				push @errors, [ $i, q{'nothing'::pg_catalog.name} ];
			}
			elsif ($t eq 'text' && $n eq 'server_name')
			{
				$arg = q{'hostile-test'::pg_catalog.text};
			}
			elsif ($t eq 'text' && ($n eq 'id_text' || $n eq 'public_text'))
			{
				(my $encoder = $name) =~ s/^snowflake_from_/snowflake_to_/;
				my $prefixed = @types > 1;
				$arg = "$schema.$encoder(382958333860159488::pg_catalog.int8"
				  . ($prefixed ? q{, 'ord_'::pg_catalog.text} : '') . ')';
				my $p = $prefixed ? 'ord_' : '';
				push @errors, [ $i, qq{'${p}0-0-0-0-0-0-0-0-0-0-0-0-1'::pg_catalog.text} ],
				  [ $i, qq{'${p}0U'::pg_catalog.text} ], [ $i, qq{'${p}ZZZZZZZZZZZZZZZZZZZZ'::pg_catalog.text} ],
				  [ $i, q{'x'::pg_catalog.text} ];
			}
			else
			{
				BAIL_OUT("no argument for $n $t of $name: give interface_calls() in HostileTest.pm a rule for it");
			}
			push @args, $arg;
		}
		my $call = sub { "SELECT $schema.$name(" . join(', ', @_) . ');' };
		# (snowflake_lastval() after a key was handed out.)
		if ($name eq 'snowflake_nextval') { unshift @good, $call->(@args) } else { push @good, $call->(@args) }
		foreach my $e (@errors)
		{
			my @a = @args;
			$a[ $e->[0] ] = $e->[1];
			push @bad, $call->(@a);
		}
	}
	return (\@good, \@bad);
}

# A copy of the PostgreSQL installation that PATH's pg_config describes
# (bindir's parent, sharedir and pkglibdir at the same paths under a
# temporary directory, hard links where it can, as EditionTest.pm makes
# one), with the files of %$extension (name => text) added to its
# extension directory.  Returns the install_path for start_snowflake_node.
sub installation_with
{
	my (%extension) = @_;
	my $probe = PostgreSQL::Test::Cluster->new('probe_' . int(rand(1e9)));
	my $bindir = $probe->config_data('--bindir');
	my $sharedir = $probe->config_data('--sharedir');
	my $pkglibdir = $probe->config_data('--pkglibdir');
	my $copy = PostgreSQL::Test::Utils::tempdir() . '/pg';
	foreach my $dir (File::Basename::dirname($bindir), $sharedir, $pkglibdir)
	{
		next if -d "$copy$dir";
		File::Path::make_path(File::Basename::dirname("$copy$dir"));
		next if system('cp', '-al', $dir, "$copy$dir") == 0;
		File::Path::remove_tree("$copy$dir");
		system('cp', '-a', $dir, "$copy$dir") == 0 or die "could not copy $dir";
	}
	foreach my $name (sort keys %extension)
	{
		my $path = "$copy$sharedir/extension/$name";
		unlink($path);
		open my $fh, '>', $path or die "$path: $!";
		print $fh $extension{$name};
		close $fh or die "$path: $!";
	}
	return $copy . File::Basename::dirname($bindir);
}

1;
