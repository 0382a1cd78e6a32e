/* SPDX-License-Identifier: MIT */
/* A tiny program built with known compilers and flags (tests/meson.build) for test-elfinfo to read back. */

/*
 * Long, alike member names make .debug_str large and compressible enough
 * that objcopy --compress-debug-sections really compresses it (it keeps a
 * section as it is when compression would not make it smaller).
 */
struct probe_record {
	int probe_record_field_with_a_long_and_repetitive_name_number_one;
	int probe_record_field_with_a_long_and_repetitive_name_number_two;
	int probe_record_field_with_a_long_and_repetitive_name_number_three;
	int probe_record_field_with_a_long_and_repetitive_name_number_four;
	int probe_record_field_with_a_long_and_repetitive_name_number_five;
	int probe_record_field_with_a_long_and_repetitive_name_number_six;
};

int probe_value(int x);

int probe_value(int x)
{
	struct probe_record r = { .probe_record_field_with_a_long_and_repetitive_name_number_one = x };

	return r.probe_record_field_with_a_long_and_repetitive_name_number_one * 3 + 1;
}

int main(int argc, char **argv)
{
	(void)argv;
	return probe_value(argc) == 4 ? 0 : 1;
}
