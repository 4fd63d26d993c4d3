// Links the PTX of a program built with relocatable device code (nvcc -rdc=true): each file's
// fat binary holds its own PTX, whose functions and variables may be defined in another file.
#pragma once

#include <string>
#include <vector>

namespace gpusc::cudart {

// One module from the files' PTX texts (in link order): the first file's .target and
// .address_size with the highest .version; .extern functions as prototypes and .extern
// variables dropped (their definitions are in another file, or the module fails to load
// naming the missing symbol); of .weak definitions with one name (templates instantiated in
// several files) and of dynamic shared memory (.extern .shared) declarations the first; every
// variable before every function; internal names two files define renamed per file.
// `what` names the program in messages. Throws InputError when the files' targets differ.
std::string linkPtx(const std::vector<std::string>& files, const std::string& what);

}  // namespace gpusc::cudart
