/* The build id of a game's WebAssembly twin as a custom section,
 * "cradle_build", holding exactly the id's bytes: a server reads it before
 * it offers the twin to a broadcast's viewers (CradleGame.cmake). C cannot
 * make a custom section with clang 14; its assembler can. */
#include "cradle_build_id.h"
	.section	.custom_section.cradle_build,"",@
	.ascii	CRADLE_BUILD_ID
